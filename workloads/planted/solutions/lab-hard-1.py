"""Reference solution of lab-hard-1: total y at North sites (measurements joined to sites by site code)."""

import json

import pandas as pd

m = pd.read_csv("data/lab/input/measurements.csv")
s = pd.read_csv("data/lab/input/sites.csv")
j = m.merge(s, left_on="site", right_on="code", how="left")
north = j[j["region"] == "North"]
print(json.dumps({"main-task": round(float(north["y"].sum()), 1), "subtask-1": int(len(north))}))
