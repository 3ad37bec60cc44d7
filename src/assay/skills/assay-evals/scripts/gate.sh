#!/bin/sh
# Run EVAL_YAML again and compare the new run with the baseline run BASE: exit 1 on a regression.
# usage: gate.sh EVAL_YAML BASE
set -e
eval_yaml="$1"
base="$2"
assay run "$eval_yaml"
candidate=$(assay runs list --json --limit 1 | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')
assay runs compare "$base" "$candidate" --fail-on regression
