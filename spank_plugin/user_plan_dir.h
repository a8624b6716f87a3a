#pragma once
// The per-user folder for plan files under the admin's plan_dir: PLAN_DIR/USER, mode
// 0700, owned by the job's user, so that no other user can read a plan, create a file
// the plugin would then trip over, or swap a file for a symlink. Made by root in
// init_post_opt (plan_dir itself is usually root's) and written into by the user.
#include <sys/types.h>

#include <string>

namespace layerplan::spank {

// Creates PLAN_DIR/DIR_NAME (0700, then chown to uid:gid through its descriptor) or checks
// the one there, and returns its path. Refuses, naming the path: a plan_dir that is missing,
// not a directory, or writable by everyone without the sticky bit; a DIR_NAME that is a
// symlink, not a directory, owned by anyone but `uid`, or writable by its group or others;
// a DIR_NAME that is empty, ".", ".." or holds '/'. Throws UsageError.
std::string prepare_user_plan_dir(const std::string& plan_dir, const std::string& dir_name, uid_t uid, gid_t gid);

// The folder name for `uid`: the user's name from the password database, else the
// number (for a user the node cannot name).
std::string user_dir_name(uid_t uid);

}  // namespace layerplan::spank
