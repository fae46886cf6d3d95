#!/bin/sh
# The reference solution of this pipeline: extract and load every source (load.py), then build the data
# models with dbt and its DuckDB adapter (dbt/). Run by the reference system in the task's session:
#   sh run.sh TASK_FOLDER SOLUTION_FOLDER        (working directory: the session's workspace)
set -eu
TASK="$1"
SOL="$2"
export DO_NOT_TRACK=1 DBT_SEND_ANONYMOUS_USAGE_STATS=false
python "$SOL/load.py" "$TASK"
WAREHOUSE=$(python -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["warehouse"]["path"])' "$TASK/config.yaml")
export KB_WAREHOUSE="$PWD/$WAREHOUSE"
rm -rf dbt_project
cp -r "$SOL/dbt" dbt_project
cd dbt_project
dbt run --profiles-dir . --project-dir . --no-use-colors --no-partial-parse
