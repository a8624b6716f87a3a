#!/usr/bin/env bash
# spank_layerplan.so exports only the SPANK symbols and needs no C++ runtime of its own
# (libgcc_s, the unwinder, it shares with libonnx: spank_plugin/CMakeLists.txt) and no
# libslurm: what Slurm's C processes (srun, sbatch, slurmstepd) can load safely.
#   tests/slurm/plugin_symbols.sh PLUGIN.so
set -uo pipefail
so=${1:?usage: plugin_symbols.sh PLUGIN.so}
status=0
exported=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
unexpected=$(grep -vE '^(plugin_name|plugin_type|plugin_version|spank_plugin_version|slurm_spank_[a-z_]+)$' <<<"$exported")
if [ -n "$unexpected" ]; then
  echo "not ok - exports more than the SPANK symbols: $(tr '\n' ' ' <<<"$unexpected")"; status=1
else
  echo "ok - exports only: $(tr '\n' ' ' <<<"$exported")"
fi
for want in plugin_name plugin_type plugin_version spank_plugin_version slurm_spank_init slurm_spank_init_post_opt \
            slurm_spank_user_init slurm_spank_task_init; do
  grep -qx "$want" <<<"$exported" || { echo "not ok - $want is not exported"; status=1; }
done
needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
if grep -qE 'libstdc\+\+|libslurm|libtomlplusplus' <<<"$needed"; then
  echo "not ok - needs a C++ runtime, toml++ or libslurm: $needed"; status=1
else
  echo "ok - needs only: $needed"
fi
exit $status
