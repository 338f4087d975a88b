#!/usr/bin/env bash
# What ran on the lent GPU for results/gpu/session-2026-11-27 (one device call, `bash .whl/gpu_cmd.sh` with the
# pinned pure-Python dependencies carried as wheels in .whl/): installs them, prints the machine and the version
# skew, runs benchmarks/gpu_session.py on every chapter unreduced, and packs what came back under $OUT.
# One-shot GPU session: every chapter's `gpu` profile (unreduced) through benchmarks/gpu_session.py, then pack.
# Run from the repository root on the device machine:  bash .whl/gpu_cmd.sh      (carry: [".whl"])
# Time: install + checks ~20 s, gpu_session <= DEADLINE + ~31 s (hard backstop DEADLINE + 45 s), packing <= ~35 s:
# with the default DEADLINE=450 it ends by ~515 s normally, ~555 s at worst (tar passes capped, skipped when late).
# Knobs (environment): DEADLINE (s, default 450), JOBS (default 8), OUT (set by the device tool; default /tmp/out),
# BENCH_ENSEMBLE=1 (first benchmarks/bench_ensemble.py on the GPU, <= 150 s, into $OUT/bench_ensemble_gpu.*),
# CHAPTERS (space-separated ids; default: gpu_session.py's list, i.e. all), GPU_CMD_NO_KILL=1 (skip the stray-kernel
# sweep: for a dry run on a shared machine), MEDEVAL_RUNS (the run store, as medeval reads it; default _runs).
# Comes back in $OUT (<= 8 files): gpu_session.tar.gz (or .part-N pieces), summary.json, log_tail.txt,
# excluded.txt, gpu_cmd.log.
set -u
T0=$(date +%s)
DEADLINE=${DEADLINE:-450}
JOBS=${JOBS:-8}
OUT=${OUT:-/tmp/out}
SESS=${SESS:-/tmp/sess}
RUNS=${MEDEVAL_RUNS:-_runs}
CHAPTERS=${CHAPTERS:-}
LIMIT_MB=15
mkdir -p "$OUT" "$SESS"
LOG="$OUT/gpu_cmd.log"
: > "$LOG"
exec > >(tee -a "$LOG") 2>&1
el() { echo "[gpu_cmd +$(( $(date +%s) - T0 ))s] $*"; }

el "install the carried wheels into /tmp/site"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || el "WHEEL INSTALL FAILED (going on; the import check below says what is missing)"
rm -rf /tmp/site/tests          # iterative-stratification's wheel ships a top-level tests/ package
export PYTHONPATH=/tmp/site:$PWD/src
# a GPU run: the CPU numerics are not what is reproduced here (CUDA kernels differ from any CPU anyway), and
# pinned mode would give the data pipeline one thread
export MEDEVAL_NUMERICS=native
# 8 chapters import these at the same moment: byte-compile once here
timeout 60 python3 -m compileall -q -j 16 /tmp/site >/dev/null 2>&1 || true

el "machine"
nvidia-smi || true
lscpu | head -20
timeout 90 python3 - <<'EOF' || el "environment check failed or timed out"
import sys, importlib.metadata as md
print("python", sys.version.split()[0], sys.executable)
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(),
          torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")
except Exception as e:
    print("torch import failed:", e)
# the image's versions of what the project pins but this session does not carry (version skew)
pins = {"torch": "2.13.0", "numpy": "2.4.6", "pandas": "3.1.1", "scikit-learn": "1.9.1", "scipy": "1.17.1",
        "matplotlib": "3.11.2", "h5py": "3.16.0", "pillow": "13.0.0", "tifffile": "2026.3.3", "pyyaml": "6.0.3",
        "filelock": "4.3.1", "psutil": "7.2.2", "threadpoolctl": "3.8.0", "tqdm": "4.70.1", "seaborn": "0.13.2",
        "markdown-it-py": "3.0.0", "joblib": "", "requests": "", "python-dateutil": "", "aiohttp": ""}
for name, pin in pins.items():
    try:
        v = md.version(name)
    except md.PackageNotFoundError:
        v = "MISSING"
    print(f"  image {name:16s} {v:14s} pin {pin or '-':10s}{'  <- differs' if pin and v.split('+')[0] != pin else ''}")
bad = []
for mod in ["medeval.cli", "medeval.runtime.execution", "medeval.runtime.notebook", "medeval.runtime.book",
            "medeval.plots", "papermill", "jupytext", "nbformat", "nbclient", "jupyter_client", "ipykernel.kernelapp",
            "IPython", "zmq", "tornado", "myst_nb", "docutils", "pydantic", "pooch", "iterstrat", "jupyterquiz",
            "matplotlib_inline.backend_inline", "openslide", "medeval.models.training", "medeval.models.batched_svm",
            "medeval.experiments.class_distribution", "medeval.experiments.multilabel_cxr14"]:
    try:
        __import__(mod)
    except Exception as e:
        bad.append(mod)
        print(f"  IMPORT FAILED {mod}: {type(e).__name__}: {e}")
try:
    from myst_nb import glue  # noqa: F401  (medeval.plots.glue_figure)
except Exception as e:
    bad.append("myst_nb.glue")
    print(f"  IMPORT FAILED myst_nb.glue: {e}")
print("imports:", "ok" if not bad else f"{len(bad)} FAILED")
EOF

if [ "${BENCH_ENSEMBLE:-0}" = 1 ]; then
  el "bench_ensemble: chapter 4a's gpu U-Net, members 1-16, ensemble vs sequential"
  timeout 150 python3 benchmarks/bench_ensemble.py --device cuda --numerics native --config gpu --members 1 2 4 8 16 \
    --epochs 2 --out "$OUT/bench_ensemble_gpu.json" --md "$OUT/bench_ensemble_gpu.md" || el "bench_ensemble exit $?"
fi

el "gpu_session: every chapter, profile gpu, unreduced, deadline ${DEADLINE} s, jobs ${JOBS}"
# gpu_session SIGTERMs the chapters at the deadline and SIGKILLs them 30 s later; the outer timeout is a backstop
timeout --signal=TERM --kill-after=5 $(( DEADLINE + 45 )) \
  python3 benchmarks/gpu_session.py --out "$SESS" --deadline "$DEADLINE" --jobs "$JOBS" ${CHAPTERS:+--chapters $CHAPTERS}
el "gpu_session exit $?"

# kernels started by this session's chapters (jupyter_client starts each in a session of its own, so a SIGKILL of
# a chapter's process group misses it): the processes whose environment names medeval's results file
[ "${GPU_CMD_NO_KILL:-0}" = 1 ] || for e in /proc/[0-9]*/environ; do
  pid=${e#/proc/}; pid=${pid%/environ}
  if [ "$pid" != "$$" ] && grep -qa "MEDEVAL_RESULTS_FILE=" "$e" 2>/dev/null; then
    el "stray kernel $pid: kill"; kill -9 "$pid" 2>/dev/null || true
  fi
done

# backstop: the runs and a summary, if gpu_session was killed before it copied them
if [ ! -d "$SESS/runs" ] && [ -d $RUNS/gpu ]; then
  mkdir -p "$SESS/runs" && cp -a $RUNS/gpu/. "$SESS/runs/" 2>/dev/null
  find "$SESS/runs" \( -name '.lock' -o -name '.staging' \) -prune -exec rm -rf {} + 2>/dev/null
fi
[ -f "$SESS/summary.json" ] || echo '{"error": "gpu_session wrote no summary.json (stopped by the backstop?)"}' \
  > "$SESS/summary.json"
cp -f "$SESS/summary.json" "$OUT/summary.json"

el "collect"
mkdir -p "$SESS/extra"
cp -f $RUNS/timings.json "$SESS/extra/timings.json" 2>/dev/null || true   # the gpu runs measured times
{ git log -1 --format='%H %s' 2>&1; git status --short 2>&1 | head -50; } > "$SESS/extra/git.txt"
{ for f in "$SESS"/logs/*.log; do echo "=== $f"; tail -n 40 "$f"; done; } > "$SESS/extra/chapter_log_tails.txt" 2>&1
du -sk $RUNS/* $RUNS/grid-cache/gpu/* 2>/dev/null > "$SESS/extra/runs_sizes_kib.txt"

# pack. level 0: everything plus the grid cache (when under 40 MiB); 1: without the grid cache and binary files
# over 1 MiB; 2: also without executed notebooks over 2 MiB; 3: split into <= 15 MiB parts (4 at most).
# Past 530 s no further pass is made (the last archive is split instead), so the script ends by ~555 s.
EXCL="$OUT/excluded.txt"
: > "$EXCL"
STAGE=/tmp/pack/gpu_session
rm -rf /tmp/pack && mkdir -p "$STAGE"
cp -a "$SESS/." "$STAGE/"
gc_kb=$(du -sk $RUNS/grid-cache/gpu 2>/dev/null | cut -f1)
late() { [ $(( $(date +%s) - T0 )) -ge "$1" ]; }     # seconds since the start: pack fewer passes when late
if [ -n "$gc_kb" ] && [ "$gc_kb" -lt 40960 ] && ! late 515; then
  mkdir -p "$STAGE/grid-cache" && cp -a $RUNS/grid-cache/gpu/. "$STAGE/grid-cache/"
elif [ -n "$gc_kb" ]; then
  echo "# grid cache ($RUNS/grid-cache/gpu, ${gc_kb} KiB) left out: over 40 MiB, or no time left to pack it" >> "$EXCL"
fi
ARCH="$OUT/gpu_session.tar.gz"
pack() {
  rm -f "$ARCH"
  timeout 20 tar -C /tmp/pack -czf "$ARCH" gpu_session || echo "# tar exit $? (124: cut at 20 s, archive incomplete)" >> "$EXCL"
  stat -c %s "$ARCH" 2>/dev/null || echo 0
}
BIG=( -type f -size +1M \( -name '*.npz' -o -name '*.npy' -o -name '*.pt' -o -name '*.pth' -o -name '*.h5'
      -o -name '*.pkl' -o -name '*.tif' -o -name '*.tiff' -o -name '*.zip' \) )
sz=$(pack); el "archive level 0: $(( sz / 1048576 )) MiB"
if [ "$sz" -ge $(( LIMIT_MB * 1048576 )) ] && ! late 530; then
  { echo "# level 1: grid cache and binary files over 1 MiB left out (bytes, path)"
    [ -d "$STAGE/grid-cache" ] && echo "$(du -sb "$STAGE/grid-cache" | cut -f1)	grid-cache/"
    find "$STAGE" "${BIG[@]}" -not -path "$STAGE/grid-cache/*" -printf '%s\t%P\n'; } >> "$EXCL"
  rm -rf "$STAGE/grid-cache"; find "$STAGE" "${BIG[@]}" -delete
  sz=$(pack); el "archive level 1: $(( sz / 1048576 )) MiB"
fi
if [ "$sz" -ge $(( LIMIT_MB * 1048576 )) ] && ! late 530; then
  { echo "# level 2: executed notebooks over 2 MiB left out (their results.json, meta.json, log.txt kept)"
    find "$STAGE" -type f -name '*.ipynb' -size +2M -printf '%s\t%P\n'; } >> "$EXCL"
  find "$STAGE" -type f -name '*.ipynb' -size +2M -delete
  sz=$(pack); el "archive level 2: $(( sz / 1048576 )) MiB"
fi
if [ "$sz" -ge $(( LIMIT_MB * 1048576 )) ]; then   # still too big (or no time for another pass): split
  echo "# level 3: split; rejoin with: cat gpu_session.tar.gz.part-* > gpu_session.tar.gz" >> "$EXCL"
  split -b 15M -d -a 1 "$ARCH" "$ARCH.part-" && rm -f "$ARCH"
  ls "$OUT"/gpu_session.tar.gz.part-* | tail -n +5 | while read -r f; do echo "dropped $f (over 4 parts)" >> "$EXCL"; rm -f "$f"; done
fi
[ -s "$EXCL" ] || echo "nothing excluded" > "$EXCL"

el "done"
python3 - "$SESS/summary.json" <<'EOF' || true
import json, sys
d = json.load(open(sys.argv[1]))
for ch, r in d.items():
    print(f"  {ch:26s}", r if not isinstance(r, dict) else
          {k: r.get(k) for k in ("exit_code", "wall_s", "stopped_at_deadline", "not_started") if k in r})
EOF
ls -la "$OUT"
{ tail -n 150 "$LOG"; echo; cat "$SESS/extra/chapter_log_tails.txt" 2>/dev/null; } > "$OUT/log_tail.txt"
exit 0
