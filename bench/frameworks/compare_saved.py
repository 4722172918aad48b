#!/usr/bin/env python3
"""memplan's saved-activation ledger against measure_saved.py's rows.

For each measured training configuration the shrunk config.json is written to a temporary folder
and given to `memplan estimate --config ... --format json` with the same batch, sequence,
precision, attention, LoRA and checkpointing. memplan's figure for what autograd keeps at the end
of the forward and loss is read off its JSON:

  batch x (layer 0 + (layers - 1) x a later layer + the rows outside the layers that are not held)
  + the batch-independent bytes (autocast's weight copies: breakdown.activations minus batch x the
    per-sample total)

(the per-layer figures from the "activations per sample" line of `explain`; held rows are the
logits alive for the loss, which autograd does not save; under full checkpointing the rebuilt
layer is a backward-time figure and not in it). The measured figure is activation + int +
param_cast bytes at the same batch. Plain Python 3, no packages:

    python3 bench/frameworks/compare_saved.py bench/frameworks/results/saved.jsonl --memplan build/memplan
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
HELD = ("held for the loss", "(held)")


def memplan_flags(row, batch):
    f = ["--seq", str(row["seq"]), "--batch", str(batch), "--precision", row["precision"],
         "--attention", row["attention"], "--format", "json"]
    if row["mode"] == "infer":
        return f + ["--mode", "infer"]
    # The transformers release the row ran (its rules differ by release: hf_release_rules.hpp).
    release = (row.get("versions") or {}).get("transformers")
    if release:
        f += ["--transformers", ".".join(release.split(".")[:2])]
    f += ["--optimizer", "adamw", "--checkpointing", row["checkpointing"]]
    if row.get("lora"):
        f += ["--lora", str(row["lora"]), "--lora-targets", row["lora_targets"]]
    if row.get("quantize"):  # measure_qlora.py's rows: peft's prepare_model_for_kbit_training leaves
        # every non-4-bit parameter fp32 under autocast, which is memplan's amp recipe (the row's precision)
        f += ["--quantize", row["quantize"]]
        if row.get("autocast_over_half") and not row["precision"].startswith("amp-"):
            f += ["--framework", "trainer"]  # Trainer's bf16=True: autocast over the half model
    return f


def parse_int(text):
    return int(text.replace(",", ""))


def memplan_saved(j, batch, layers):
    """What memplan says autograd keeps at the end of the forward and loss."""
    line = next((x for x in j.get("explain", []) if x.startswith("activations per sample")), None)
    if line is None:
        raise ValueError("no 'activations per sample' line in explain")
    m = re.search(r"layer 0: ([\d,]+) B, others ([\d,]+) B\) \+ outside the layers = ([\d,]+) B", line)
    if not m:
        raise ValueError("unexpected explain line: " + line)
    first, other, per_sample = (parse_int(g) for g in m.groups())
    outside = sum(r["bytes"] for r in j.get("layer_ledger", [])
                  if r["name"].startswith("[outside layers]") and not any(h in r["name"] for h in HELD))
    fixed = j["breakdown"]["activations"] - batch * per_sample
    return batch * (first + (layers - 1) * other) + outside + fixed


def run_memplan(binary, cfg_path, row, batch):
    cmd = [binary, "estimate", "--config", cfg_path] + memplan_flags(row, batch)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise ValueError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}")
    return json.loads(p.stdout), " ".join(cmd[2:])


def measured_saved(m):
    k = m["kinds"]
    return k.get("activation", 0) + k.get("int", 0) + k.get("param_cast", 0)


def label(row):
    parts = [row["arch"], row["precision"], row["attention"]]
    if row["mode"] == "infer":
        return " ".join(parts + ["infer", "logits=" + row["logits"], f"s{row['seq']}"])
    if row.get("lora"):
        parts.append(f"lora{row['lora']}:{row['lora_targets']}")
    if row.get("quantize"):
        parts.append(row["quantize"] + ("+prep" if row.get("kbit_prep") else "")
                     + ("+ac" if row.get("autocast_over_half") else ""))
    if row["checkpointing"] != "none":
        parts.append("ckpt")
    return " ".join(parts + [f"s{row['seq']}"])


def summarise(errs):
    if not errs:
        return "no rows"
    a = [abs(e) for e in errs]
    return (f"{len(errs)} rows, median |error| {statistics.median(a):.2f}%, within 1%: "
            f"{100 * sum(x <= 1 for x in a) / len(a):.1f}%, below -3%: {sum(e < -3 for e in errs)}, "
            f"worst {min(errs):+.2f}% / {max(errs):+.2f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", help="JSON lines from measure_saved.py")
    ap.add_argument("--memplan", default=os.environ.get("MEMPLAN_BINARY", os.path.join(ROOT, "build", "memplan")))
    ap.add_argument("--batch", type=int, default=4, help="the measured batch size compared (default 4)")
    ap.add_argument("--worst", type=int, default=25, help="rows listed below the summary")
    ap.add_argument("--out", help="write every compared row as JSON lines")
    ap.add_argument("--markdown", action="store_true", help="per architecture and precision as a Markdown table")
    args = ap.parse_args()

    rows = [json.loads(x) for x in open(args.results) if x.strip()]
    tmp = tempfile.mkdtemp(prefix="memplan_cmp_")
    out = []
    failed = []
    infer = []
    for i, row in enumerate(rows):
        if "error" in row:
            failed.append((label(row), "measure: " + row["error"]))
            continue
        cfg_path = os.path.join(tmp, f"{i}.json")
        with open(cfg_path, "w") as f:
            json.dump(row["config"], f)
        m = row["measured"][str(args.batch)]
        try:
            j, cmd = run_memplan(args.memplan, cfg_path, row, args.batch)
        except (ValueError, OSError, subprocess.TimeoutExpired) as e:
            failed.append((label(row), "memplan: " + str(e)))
            continue
        if row["mode"] == "infer":
            infer.append(dict(label=label(row), logits=m["kinds"]["logits"], kv=m["kinds"]["kv_cache"],
                              memplan_kv=j["breakdown"]["kv_cache"], memplan_act=j["breakdown"]["activations"],
                              command=cmd))
            continue
        layers = row["config"].get("num_hidden_layers", row["config"].get("n_layer"))
        try:
            pred = memplan_saved(j, args.batch, layers)
            if row["precision"].startswith("amp-") and row["checkpointing"] == "full":
                # memplan's batch-independent bytes then hold the half weight copies of the one layer
                # rebuilt in backward, which the forward does not keep (its explain line says how many).
                line = next((x for x in j.get("explain", []) if "half-precision weight copies" in x), "")
                m_rebuilt = re.search(r"([\d,]+) B of the layer rebuilt in backward", line)
                if m_rebuilt:
                    pred -= parse_int(m_rebuilt.group(1))
        except (ValueError, KeyError) as e:
            failed.append((label(row), "memplan json: " + str(e)))
            continue
        meas = measured_saved(m)
        err = 100.0 * (pred - meas) / meas
        out.append(dict(label=label(row), arch=row["arch"], precision=row["precision"],
                        attention=row["attention"], lora=row.get("lora", 0), checkpointing=row["checkpointing"],
                        measured=meas, memplan=pred, error=err, kinds=m["kinds"], command=cmd))

    errs = [r["error"] for r in out]
    v = rows[0]["versions"] if rows else {}
    print(f"# torch {v.get('torch')}, transformers {v.get('transformers')}, peft {v.get('peft')}; batch {args.batch}")
    print("training, saved tensors: " + summarise(errs))
    by = {}
    for r in out:
        by.setdefault((r["arch"], r["precision"]), []).append(r["error"])
    if args.markdown:
        print("\n| architecture | precision | rows | median error | within 1% | worst |")
        print("|---|---|---:|---:|---:|---:|")
        for (a, p), e in sorted(by.items()):
            print(f"| {a} | {p} | {len(e)} | {statistics.median(e):+.2f}% | "
                  f"{100 * sum(abs(x) <= 1 for x in e) / len(e):.0f}% | {min(e, key=lambda x: -abs(x)):+.2f}% |")
    else:
        print(f"\n{'architecture':<12} {'precision':<9} {'rows':>4} {'median':>8} {'in 1%':>6} {'worst':>8}")
        for (a, p), e in sorted(by.items()):
            print(f"{a:<12} {p:<9} {len(e):>4} {statistics.median(e):>+7.2f}% "
                  f"{100 * sum(abs(x) <= 1 for x in e) / len(e):>5.0f}% {min(e, key=lambda x: -abs(x)):>+7.2f}%")
    print(f"\nworst {args.worst} (by |error|):")
    print(f"{'configuration':<52} {'measured':>10} {'memplan':>10} {'error':>8}")
    for r in sorted(out, key=lambda r: -abs(r["error"]))[:args.worst]:
        print(f"{r['label']:<52} {r['measured']:>10} {r['memplan']:>10} {r['error']:>+7.2f}%")
    if infer:
        print(f"\ninference forwards ({len(infer)}): measured logits and KV cache next to memplan's KV cache and "
              "working buffer")
        for r in infer[:args.worst]:
            print(f"{r['label']:<52} logits {r['logits']:>9} kv {r['kv']:>8} | memplan kv {r['memplan_kv']:>8} "
                  f"act {r['memplan_act']:>8}")
    if failed:
        print(f"\nnot compared ({len(failed)}):")
        for name, why in failed[:40]:
            print(f"  {name}: {why}")
    if args.out:
        with open(args.out, "w") as f:
            for r in out:
                f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
