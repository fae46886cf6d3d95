"""Reference solution of lab-easy-1 (bundled 'planted' workload): sum of x at North sites."""

import json

import pandas as pd

LAKE = "data/lab/input"
m = pd.read_csv(f"{LAKE}/measurements.csv")
s = pd.read_csv(f"{LAKE}/sites.csv")
north = set(s.loc[s["region"] == "North", "code"])
print(json.dumps({"main-task": int(m.loc[m["site"].isin(north), "x"].sum()), "subtask-1": sorted(north)}))
