#!/usr/bin/env bash
# Draws kvbench's charts: runs gnuplot on the kvbench.gp script and data
# files that `kvbench --plot_dir=DIR` wrote, producing DIR/lookups.png,
# DIR/blocks.png and (after --fp_sweep) DIR/fp_rate.png.
# Usage: bench/plot.sh DIR
set -euo pipefail
dir="${1:?usage: bench/plot.sh DIR (the --plot_dir given to kvbench)}"
if ! command -v gnuplot >/dev/null; then
  echo "gnuplot not found: install gnuplot-nox (BLOOMKV_WITH_PLOTS=1 scripts/install-deps.sh)" >&2
  exit 1
fi
[[ -f "$dir/kvbench.gp" ]] || { echo "$dir/kvbench.gp not found: run kvbench --plot_dir=$dir first" >&2; exit 1; }
(cd "$dir" && gnuplot kvbench.gp)
ls "$dir"/*.png
