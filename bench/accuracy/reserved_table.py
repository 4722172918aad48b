#!/usr/bin/env python3
"""memplan's reserved peak against torch.cuda.max_memory_reserved() measured on a GPU.

bench/accuracy/results/h200-2026-12-01/hf_train.json holds training runs of Hugging Face models on an
H200 (torch 2.11, transformers 5.17, peft 0.21; bench/accuracy/hf_train.py), each with the measured
allocated peak (`peak`, max_memory_allocated over three steps) and reserved peak (`peak_reserved`) and
the memplan command a user would type (`predicted.command`). This script reruns each command with the
given memplan binary and compares:

  allocated  measured peak           memplan peak_bytes (the step timeline's peak)
  reserved   measured peak_reserved  memplan reserved.reserved_bytes (the step replayed tensor by tensor
                                     through the caching allocator's rules)

and prints (or writes into docs/accuracy.md between the "reserved-table" markers) one row per run.
The measured reserved includes the 32 MiB the run's cuBLAS start-up left reserved (`reserved_then`),
memplan's replay counts the two cuBLAS workspaces itself.

    python3 bench/accuracy/reserved_table.py --memplan build/memplan [--write docs/accuracy.md]
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "results", "h200-2026-12-01", "hf_train.json")


def command_args(command):
    args = shlex.split(command)
    out = []
    for a in args:
        # The recorded paths point into the checkout that ran the bench: make them relative to ROOT.
        i = a.find("tests/data/")
        out.append(a[i:] if i >= 0 else a)
    return out


def run(binary, args):
    p = subprocess.run([os.path.abspath(binary), *args], capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout), ""


def compare(binary, data):
    doc = json.load(open(data))
    rows = []
    for r in doc["results"]:
        m = r.get("measured") or {}
        cmd = (r.get("predicted") or {}).get("command")
        name = "%s %s b%d s%d%s" % (r["model"], r["recipe"], r["batch"], r["seq"],
                                   " gc" if r.get("checkpointing") else "")
        if not cmd or "peak_reserved" not in m:
            continue
        out, err = run(binary, command_args(cmd))
        row = {"case": name, "allocated": m["peak"], "reserved": m["peak_reserved"]}
        if out is None or not out.get("reserved"):
            row["reason"] = err or "no reserved prediction"
            rows.append(row)
            continue
        res = out["reserved"]
        row.update(peak=out["peak_bytes"], predicted=res["reserved_bytes"], segments=res["segments"],
                   phase="%s (step %d)" % (res["phase"], res["step"]),
                   alloc_error=(out["peak_bytes"] - m["peak"]) / m["peak"],
                   error=(res["reserved_bytes"] - m["peak_reserved"]) / m["peak_reserved"],
                   measured_gap=(m["peak_reserved"] - m["peak"]) / m["peak"],
                   predicted_gap=(res["reserved_bytes"] - out["peak_bytes"]) / out["peak_bytes"])
        rows.append(row)
    return rows


def table(rows):
    lines = ["| case | measured allocated | memplan allocated | error | measured reserved | memplan reserved | "
             "error | reserved/allocated measured | memplan | reserved grew |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if "error" not in r:
            lines.append("| %s | %s | - | - | %s | - | - | - | - | %s |" % (r["case"], f"{r['allocated']:,}",
                                                                        f"{r['reserved']:,}", r["reason"]))
            continue
        lines.append("| %s | %s | %s | %+.1f%% | %s | %s | %+.1f%% | +%.1f%% | +%.1f%% | %s |" % (
            r["case"], f"{r['allocated']:,}", f"{r['peak']:,}", 100 * r["alloc_error"], f"{r['reserved']:,}",
            f"{r['predicted']:,}", 100 * r["error"], 100 * r["measured_gap"], 100 * r["predicted_gap"], r["phase"]))
    errs = [r["error"] for r in rows if "error" in r]
    if errs:
        aerrs = [r["alloc_error"] for r in rows if "error" in r]
        lines.append("")
        lines.append("%d runs: reserved median |error| %.1f%% (worst %+.1f%% / %+.1f%%), %d of %d within -5%% .. "
                     "+10%%; allocated median |error| %.1f%%." % (
                         len(errs), 100 * statistics.median(abs(e) for e in errs), 100 * min(errs),
                         100 * max(errs), sum(1 for e in errs if -0.05 <= e <= 0.10), len(errs),
                         100 * statistics.median(abs(e) for e in aerrs)))
    return "\n".join(lines) + "\n"


def write(path, text):
    begin, end = "<!-- reserved-table begin -->", "<!-- reserved-table end -->"
    doc = open(path).read()
    block = begin + "\n" + text + end
    if begin in doc:
        doc = doc[:doc.index(begin)] + block + doc[doc.index(end) + len(end):]
    else:
        doc += "\n" + block + "\n"
    open(path, "w").write(doc)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memplan", default=os.environ.get("MEMPLAN_BINARY", os.path.join(ROOT, "build", "memplan")))
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--write", default=None, help="insert the table into this markdown file")
    args = ap.parse_args()
    text = table(compare(args.memplan, args.data))
    print(text)
    if args.write:
        write(args.write, text)


if __name__ == "__main__":
    sys.exit(main())
