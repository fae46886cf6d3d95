"""A planted-fault corpus: five pipelines and, for each, warehouses that differ from a correct one by a single
fault, each labelled with the verdicts the rules give: the original ELT-Bench code's (``original``), the
``elt-bench`` comparator's (the original with its named fixes) and ``verified``'s (ELT-Bench-Verified's rules
with kramabench's named differences: rows counted, rows paired on identifying columns, names without regard to
case); where Verified's own code gives the other verdict, the case names the differences that decide it.

``test_corpus.py`` builds every warehouse (a real DuckDB file), scores it the way a run does and checks the
verdicts against the labels and against two oracles written from the published behaviour
(``oracle_original.py``, ``oracle_verified.py``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.elt.suites import write_suite

#: (original, elt-bench, verified)
Verdicts = tuple[bool, bool, bool]
OK: Verdicts = (True, True, True)
WRONG: Verdicts = (False, False, False)


def _share(revenue: list[float], day: list[str]) -> list[float]:
    tot: dict[str, float] = {}
    for r, d in zip(revenue, day, strict=True):
        tot[d] = tot.get(d, 0.0) + r
    return [100 * r / tot[d] for r, d in zip(revenue, day, strict=True)]


_MARKET_REV = [30.5, 12.0, 7.25, 41.0]
_MARKET_DAY = ["2024-03-01", "2024-03-01", "2024-03-02", "2024-03-02"]
_MARKET_SHARE = _share(_MARKET_REV, _MARKET_DAY)


def _visits() -> list[tuple[int, int, str, str, float]]:
    """43 visits: (visit_id, patient_id, clinic_code, seen_at, fee); every time off midnight, fees multiples of
    0.25 (exact sums); patient 1's visits at clinic C1 total 255.75, 0.3% under patient 4's 256.5."""
    out = []
    for n in range(43):
        seen = dt.datetime(2024, 1, 1, 8, 0) + dt.timedelta(
            days=n, minutes=(n * 37) % 540 + 1, seconds=n % 60
        )
        fee = 40 + 2.5 * n + 0.25 * (n % 4) + (22.0 if n == 30 else 0.0)
        out.append((1001 + n, n % 5 + 1, f"C{n % 3 + 1}", str(seen), fee))
    return out


_VISITS = _visits()
_CLINICS = [("C1", "Oslo", True), ("C2", "Riga", False), ("C3", "Bergen", True)]
_STAFF = [(1, "Ann", 8.0), (1, "bo", 6.5), (2, "Cy", 7.0), (3, "Di", 4.0), (4, "Ed", 5.5)]
_REFUNDS = {"C1": "0", "C2": "", "C3": "2"}


def _visit_log(date_only: int = 0) -> str:
    """visit_log's ground truth; ``date_only``: the first that many rows' seen_at written as the day only."""
    return "visit_id,booking_id,patient_id,seen_at,fee\n" + "".join(
        f"{v},{v + 5000},{p},{t[:10] if k < date_only else t},{f!r}\n"
        for k, (v, p, _, t, f) in enumerate(_VISITS)
    )


def _clinic_summary() -> str:
    lines = ["clinic_code,city,weekend,visits,fee_total,visit_share_pct,refunds"]
    for code, city, weekend in _CLINICS:
        fees = [f for _, _, c, _, f in _VISITS if c == code]
        lines.append(
            f"{code},{city},{weekend},{len(fees)},{sum(fees)!r},{100.0 * len(fees) / 43!r},{_REFUNDS[code]}"
        )
    return "\n".join(lines) + "\n"


def _patient_visits() -> str:
    groups: dict[tuple[int, str], list[float]] = {}
    for _, p, c, _, f in _VISITS:
        groups.setdefault((p, c), []).append(f)
    return "patient_id,clinic_code,visits,fee_total\n" + "".join(
        f"{p},{c},{len(fs)},{sum(fs)!r}\n" for (p, c), fs in sorted(groups.items())
    )


def _clinic_keys() -> str:
    return "unique_clinic_id,city,visits\n" + "".join(
        f"{hashlib.md5(code.encode()).hexdigest()},{city},{sum(1 for v in _VISITS if v[2] == code)}\n"
        for code, city, _ in _CLINICS
    )


def _fee_bands() -> str:
    out = "fee_min,fee_max,fee_avg\n"
    for code, _, _ in _CLINICS:
        fees = [f for _, _, c, _, f in _VISITS if c == code]
        out += f"{min(fees)!r},{max(fees)!r},{sum(fees) / len(fees)!r}\n"
    return out


def _cols(*names: str) -> list[dict[str, str]]:
    return [{"name": n, "description": n.replace("_", " ")} for n in names]


#: pipeline id -> its spec (suite format, tests.elt.suites.write_suite), the SQL that builds a correct
#: warehouse, and the labels of a correct warehouse per model
PIPELINES: dict[str, dict[str, Any]] = {
    "shop": {
        "spec": {
            "pipeline": {
                "sources": {"postgres": ["customers"], "files": [{"table": "orders", "format": "csv"}]},
                "tables": {"customers": 3, "orders": 5},
                "models": [
                    {
                        "name": "customer_summary",
                        "description": "one row per customer",
                        "columns": _cols(
                            "customer_id",
                            "name",
                            "zip",
                            "signup",
                            "is_member",
                            "tier",
                            "orders",
                            "spent",
                            "last_order",
                        ),
                    }
                ],
            },
            "data": {
                "customers.csv": "customer_id,name,zip,signup,is_member,tier\n1,Ann,0451,2024-01-02,true,gold\n"
                "2,Bob,0007,2024-02-03,false,\n3,Cy,1200,2024-03-04,true,silver\n",
                "orders.csv": "order_id,customer_id,amount,ordered_at\n1,1,10.5,2024-05-01 10:00:00\n"
                "2,1,2.25,2024-05-03 00:00:00\n3,2,7,2024-05-02 12:30:00\n4,3,3.5,2024-05-04 08:15:00\n"
                "5,3,2,2024-05-06 23:59:00\n",
            },
            "schemas": {
                "customers.csv": "column_name,column_description\ncustomer_id,id\nname,name\nzip,zip code\n"
                "signup,day\nis_member,member\ntier,tier\n",
                "orders.csv": "column_name,column_description\norder_id,id\ncustomer_id,who\namount,how much\n"
                "ordered_at,when\n",
            },
            "evaluation": {
                "customer_summary": "SELECT * FROM shop.main.customer_summary ORDER BY customer_id"
            },
            "ground_truth": {
                "customer_summary": "customer_id,name,zip,signup,is_member,tier,orders,spent,last_order\n"
                "1,Ann,0451,2024-01-02,True,gold,2,12.75,2024-05-03\n"
                "2,Bob,0007,2024-02-03,False,,1,7.0,2024-05-02\n"
                "3,Cy,1200,2024-03-04,True,silver,2,5.5,2024-05-06\n"
            },
        },
        "build": [
            "CREATE TABLE customers (customer_id INTEGER, name VARCHAR, zip VARCHAR, signup DATE, is_member BOOLEAN, "
            "tier VARCHAR)",
            "INSERT INTO customers VALUES (1, 'Ann', '0451', '2024-01-02', true, 'gold'), "
            "(2, 'Bob', '0007', '2024-02-03', false, NULL), (3, 'Cy', '1200', '2024-03-04', true, 'silver')",
            "CREATE TABLE orders (order_id INTEGER, customer_id INTEGER, amount DOUBLE, ordered_at TIMESTAMP)",
            "INSERT INTO orders VALUES (1, 1, 10.5, '2024-05-01 10:00:00'), (2, 1, 2.25, '2024-05-03 00:00:00'), "
            "(3, 2, 7, '2024-05-02 12:30:00'), (4, 3, 3.5, '2024-05-04 08:15:00'), (5, 3, 2, '2024-05-06 23:59:00')",
            "CREATE TABLE customer_summary AS SELECT c.customer_id, c.name, c.zip, c.signup, c.is_member, c.tier, "
            "count(o.order_id) AS orders, sum(o.amount) AS spent, CAST(max(o.ordered_at) AS DATE) AS last_order "
            "FROM customers c LEFT JOIN orders o USING (customer_id) GROUP BY ALL ORDER BY 1",
        ],
        "labels": {"customer_summary": OK},
    },
    "fleet": {
        "spec": {
            "pipeline": {
                "sources": {"mongodb": ["trips"], "postgres": ["drivers"]},
                "tables": {"trips": 6, "drivers": 2},
                "models": [
                    {
                        "name": "driver_month",
                        "description": "one row per driver and month",
                        "columns": _cols("driver_id", "month", "trips", "avg_delay_min", "on_time_pct"),
                    }
                ],
            },
            "data": {
                "trips.jsonl": "".join(
                    f'{{"trip_id": {i}, "driver_id": {d}, "started_at": "{t}", "delay_min": {m}}}\n'
                    for i, d, t, m in (
                        (1, 1, "2024-01-05 08:00:00", -5),
                        (2, 1, "2024-01-20 09:00:00", -2),
                        (3, 1, "2024-02-03 10:00:00", 4),
                        (4, 2, "2024-01-02 07:00:00", -3),
                        (5, 2, "2024-01-10 11:00:00", 2),
                        (6, 2, "2024-01-15 12:00:00", -2),
                    )
                ),
                "drivers.csv": "driver_id,name\n1,Lu\n2,Max\n",
            },
            "schemas": {
                "trips.csv": "column_name,column_description\ntrip_id,id\ndriver_id,who\nstarted_at,when\n"
                "delay_min,late by\n",
                "drivers.csv": "column_name,column_description\ndriver_id,id\nname,name\n",
            },
            "evaluation": {"driver_month": "SELECT * FROM fleet.main.driver_month ORDER BY driver_id, month"},
            "ground_truth": {
                "driver_month": "driver_id,month,trips,avg_delay_min,on_time_pct\n"
                "1,2024-01-01,2,-3.5,100.0\n1,2024-02-01,1,4.0,0.0\n"
                "2,2024-01-01,3,-1.0,66.66666666666667\n"
            },
        },
        "build": [
            "CREATE TABLE drivers (driver_id INTEGER, name VARCHAR)",
            "INSERT INTO drivers VALUES (1, 'Lu'), (2, 'Max')",
            "CREATE TABLE trips (trip_id INTEGER, driver_id INTEGER, started_at TIMESTAMP, delay_min INTEGER)",
            "INSERT INTO trips VALUES (1, 1, '2024-01-05 08:00:00', -5), (2, 1, '2024-01-20 09:00:00', -2), "
            "(3, 1, '2024-02-03 10:00:00', 4), (4, 2, '2024-01-02 07:00:00', -3), (5, 2, '2024-01-10 11:00:00', 2), "
            "(6, 2, '2024-01-15 12:00:00', -2)",
            "CREATE TABLE driver_month AS SELECT driver_id, CAST(date_trunc('month', started_at) AS DATE) AS month, "
            "count(*) AS trips, avg(delay_min) AS avg_delay_min, "
            "100 * CAST(count(*) FILTER (WHERE delay_min <= 0) AS DOUBLE) / count(*) AS on_time_pct "
            "FROM trips GROUP BY ALL ORDER BY 1, 2",
        ],
        # negative averages: the original's 1% test rejects every negative expected value (fix sign)
        "labels": {"driver_month": (False, True, True)},
    },
    "market": {
        "spec": {
            "pipeline": {
                "sources": {"rest": ["events"], "s3": [{"table": "regions", "format": "csv"}]},
                "tables": {"events": 7, "regions": 2},
                "models": [
                    {
                        "name": "daily_region",
                        "description": "one row per day and region",
                        "columns": _cols("day", "region", "events", "revenue", "share_pct", "first_at"),
                    }
                ],
            },
            "data": {
                "events.jsonl": "".join(
                    f'{{"event_id": {i}, "region": "{r}", "happened_at": "{t}", "amount": {a}}}\n'
                    for i, r, t, a in (
                        (1, "north", "2024-03-01 08:00:00", 10.5),
                        (2, "north", "2024-03-01 17:20:00", 20.0),
                        (3, "south", "2024-03-01 09:30:00", 12.0),
                        (4, "north", "2024-03-02 10:15:00", 7.25),
                        (5, "south", "2024-03-02 07:45:30", 11.0),
                        (6, "south", "2024-03-02 12:00:00", 15.0),
                        (7, "south", "2024-03-02 18:00:00", 15.0),
                    )
                ),
                "regions.csv": "region,manager\nnorth,Ida\nsouth,Jo\n",
            },
            "schemas": {
                "events.csv": "column_name,column_description\nevent_id,id\nregion,where\nhappened_at,when\namount,how much\n",
                "regions.csv": "column_name,column_description\nregion,name\nmanager,who\n",
            },
            # no ORDER BY (as many of ELT-Bench's queries): the warehouse's row order is compared
            "evaluation": {"daily_region": "SELECT * FROM market.main.daily_region"},
            "ground_truth": {
                "daily_region": "day,region,events,revenue,share_pct,first_at\n"
                + "".join(
                    f"{d},{r},{n},{v!r},{s!r},{f}\n"
                    for d, r, n, v, s, f in zip(
                        _MARKET_DAY,
                        ["north", "south", "north", "south"],
                        [2, 1, 1, 3],
                        _MARKET_REV,
                        _MARKET_SHARE,
                        [
                            "2024-03-01 08:00:00",
                            "2024-03-01 09:30:00",
                            "2024-03-02 10:15:00",
                            "2024-03-02 07:45:30",
                        ],
                        strict=True,
                    )
                )
            },
        },
        "build": [
            "CREATE TABLE regions (region VARCHAR, manager VARCHAR)",
            "INSERT INTO regions VALUES ('north', 'Ida'), ('south', 'Jo')",
            "CREATE TABLE events (event_id INTEGER, region VARCHAR, happened_at TIMESTAMP, amount DOUBLE)",
            "INSERT INTO events VALUES (1, 'north', '2024-03-01 08:00:00', 10.5), (2, 'north', '2024-03-01 17:20:00', 20.0), "
            "(3, 'south', '2024-03-01 09:30:00', 12.0), (4, 'north', '2024-03-02 10:15:00', 7.25), "
            "(5, 'south', '2024-03-02 07:45:30', 11.0), (6, 'south', '2024-03-02 12:00:00', 15.0), "
            "(7, 'south', '2024-03-02 18:00:00', 15.0)",
            "CREATE TABLE daily_region AS SELECT day, region, events, revenue, "
            "100 * revenue / sum(revenue) OVER (PARTITION BY day) AS share_pct, first_at FROM ("
            "SELECT CAST(happened_at AS DATE) AS day, region, count(*) AS events, sum(amount) AS revenue, min(happened_at) AS first_at "
            "FROM events GROUP BY ALL) ORDER BY day, region",
        ],
        "labels": {"daily_region": OK},
    },
    "cargo": {
        "spec": {
            "pipeline": {
                "sources": {"files": [{"table": "shipments", "format": "jsonl"}], "postgres": ["ports"]},
                "tables": {"shipments": 3, "ports": 2},
                "models": [
                    {
                        "name": "shipment_weights",
                        "description": "one row per shipment",
                        "columns": _cols(
                            "shipment", "port_code", "weight_kg", "packages", "fragile", "inspected_on"
                        ),
                    },
                    {
                        "name": "port_totals",
                        "description": "one row per port (the total weight first)",
                        "columns": _cols("total_kg", "shipments", "port_code"),
                    },
                ],
            },
            "data": {
                "shipments.jsonl": '{"shipment": "S-1", "port_code": "007", "weight_kg": 1500.0, "packages": 3, '
                '"fragile": false, "inspected_on": "2024-04-01"}\n'
                '{"shipment": "S-2", "port_code": "120", "weight_kg": 2250.0, "packages": 5, '
                '"fragile": true, "inspected_on": null}\n'
                '{"shipment": "S-3", "port_code": "007", "weight_kg": 980.0, "packages": 1, '
                '"fragile": false, "inspected_on": "2024-04-03"}\n',
                "ports.csv": "port_code,city\n007,Oslo\n120,Riga\n",
            },
            "schemas": {
                "shipments.csv": "column_name,column_description\nshipment,id\nport_code,port\n"
                "weight_kg,kg\npackages,n\nfragile,flag\ninspected_on,day\n",
                "ports.csv": "column_name,column_description\nport_code,code\ncity,city\n",
            },
            "evaluation": {
                "shipment_weights": "SELECT * FROM cargo.main.shipment_weights ORDER BY shipment",
                "port_totals": "SELECT * FROM cargo.main.port_totals",
            },
            "ground_truth": {
                "shipment_weights": "shipment,port_code,weight_kg,packages,fragile,inspected_on\n"
                "S-1,007,1500.0,3,False,2024-04-01\nS-2,120,2250.0,5,True,\n"
                "S-3,007,980.0,1,False,2024-04-03\n",
                # whole numbers: an integer ground truth (the original compares it within 1% too)
                "port_totals": "total_kg,shipments,port_code\n2480,2,007\n2250,1,120\n",
            },
        },
        "build": [
            "CREATE TABLE ports (port_code VARCHAR, city VARCHAR)",
            "INSERT INTO ports VALUES ('007', 'Oslo'), ('120', 'Riga')",
            "CREATE TABLE shipments (shipment VARCHAR, port_code VARCHAR, weight_kg DOUBLE, packages INTEGER, "
            "fragile BOOLEAN, inspected_on DATE)",
            "INSERT INTO shipments VALUES ('S-1', '007', 1500.0, 3, false, '2024-04-01'), "
            "('S-2', '120', 2250.0, 5, true, NULL), ('S-3', '007', 980.0, 1, false, '2024-04-03')",
            "CREATE TABLE shipment_weights AS SELECT shipment, port_code, weight_kg, packages, fragile, inspected_on "
            "FROM shipments ORDER BY shipment",
            "CREATE TABLE port_totals AS SELECT sum(weight_kg) AS total_kg, count(*) AS shipments, port_code "
            "FROM shipments GROUP BY port_code ORDER BY port_code",
        ],
        "labels": {"shipment_weights": OK, "port_totals": OK},
    },
    "visits": {
        "spec": {
            "pipeline": {
                "sources": {
                    "postgres": ["visits", "staff"],
                    "files": [{"table": "clinics", "format": "csv"}],
                },
                "tables": {"visits": 43, "clinics": 3, "staff": 5},
                "models": [
                    {
                        "name": "visit_log",
                        "description": "one row per visit",
                        "columns": _cols("visit_id", "booking_id", "patient_id", "seen_at", "fee"),
                    },
                    {
                        "name": "clinic_summary",
                        "description": "one row per clinic",
                        "columns": _cols(
                            "clinic_code",
                            "city",
                            "weekend",
                            "visits",
                            "fee_total",
                            "visit_share_pct",
                            "refunds",
                        ),
                    },
                    {
                        "name": "patient_visits",
                        "description": "one row per patient and clinic",
                        "columns": _cols("patient_id", "clinic_code", "visits", "fee_total"),
                    },
                    {
                        "name": "clinic_keys",
                        "description": "one row per clinic, with a surrogate key",
                        "columns": _cols("unique_clinic_id", "city", "visits"),
                    },
                    {
                        "name": "fee_bands",
                        "description": "one row per clinic, measures only",
                        "columns": _cols("fee_min", "fee_max", "fee_avg"),
                    },
                    {
                        "name": "staff_shifts",
                        "description": "one row per staff member",
                        "columns": _cols("clinic_id", "name", "shift_hours"),
                    },
                ],
            },
            "data": {
                "visits.csv": "visit_id,patient_id,clinic_code,seen_at,fee\n"
                + "".join(f"{v},{p},{c},{t},{f!r}\n" for v, p, c, t, f in _VISITS),
                "clinics.csv": "clinic_code,city,weekend\n"
                + "".join(f"{c},{city},{str(w).lower()}\n" for c, city, w in _CLINICS),
                "staff.csv": "clinic_id,name,shift_hours\n"
                + "".join(f"{c},{n},{h!r}\n" for c, n, h in _STAFF),
            },
            "schemas": {
                "visits.csv": "column_name,column_description\nvisit_id,id\npatient_id,who\nclinic_code,where\n"
                "seen_at,when\nfee,how much\n",
                "clinics.csv": "column_name,column_description\nclinic_code,code\ncity,city\nweekend,open on weekends\n",
                "staff.csv": "column_name,column_description\nclinic_id,clinic\nname,name\nshift_hours,hours\n",
            },
            # patient_visits, clinic_keys and fee_bands without ORDER BY: the warehouse's row order is compared
            "evaluation": {
                "visit_log": "SELECT * FROM visits.main.visit_log ORDER BY visit_id",
                "clinic_summary": "SELECT * FROM visits.main.clinic_summary ORDER BY clinic_code",
                "patient_visits": "SELECT * FROM visits.main.patient_visits",
                "clinic_keys": "SELECT * FROM visits.main.clinic_keys",
                "fee_bands": "SELECT * FROM visits.main.fee_bands",
                "staff_shifts": "SELECT * FROM visits.main.staff_shifts ORDER BY name",
            },
            "ground_truth": {
                "visit_log": _visit_log(),
                "clinic_summary": _clinic_summary(),
                "patient_visits": _patient_visits(),
                "clinic_keys": _clinic_keys(),
                "fee_bands": _fee_bands(),
                "staff_shifts": "clinic_id,name,shift_hours\n"
                + "".join(f"{c},{n},{h!r}\n" for c, n, h in sorted(_STAFF, key=lambda r: r[1])),
            },
        },
        "build": [
            "CREATE TABLE clinics (clinic_code VARCHAR, city VARCHAR, weekend BOOLEAN)",
            "INSERT INTO clinics VALUES "
            + ", ".join(f"('{c}', '{city}', {str(w).lower()})" for c, city, w in _CLINICS),
            "CREATE TABLE visits (visit_id INTEGER, patient_id INTEGER, clinic_code VARCHAR, seen_at TIMESTAMP, fee DOUBLE)",
            "INSERT INTO visits VALUES "
            + ", ".join(f"({v}, {p}, '{c}', '{t}', {f!r})" for v, p, c, t, f in _VISITS),
            "CREATE TABLE staff (clinic_id INTEGER, name VARCHAR, shift_hours DOUBLE)",
            "INSERT INTO staff VALUES " + ", ".join(f"({c}, '{n}', {h!r})" for c, n, h in _STAFF),
            "CREATE TABLE visit_log AS SELECT visit_id, visit_id + 5000 AS booking_id, patient_id, seen_at, fee "
            "FROM visits ORDER BY visit_id",
            "CREATE TABLE clinic_summary AS SELECT c.clinic_code, c.city, c.weekend, count(*) AS visits, "
            "sum(v.fee) AS fee_total, 100.0 * count(*) / 43 AS visit_share_pct, "
            "CASE c.clinic_code WHEN 'C1' THEN 0 WHEN 'C3' THEN 2 END AS refunds "
            "FROM clinics c JOIN visits v USING (clinic_code) GROUP BY ALL ORDER BY 1",
            "CREATE TABLE patient_visits AS SELECT patient_id, clinic_code, count(*) AS visits, sum(fee) AS fee_total "
            "FROM visits GROUP BY ALL ORDER BY patient_id, clinic_code",
            "CREATE TABLE clinic_keys AS SELECT md5(clinic_code) AS unique_clinic_id, city, "
            "(SELECT count(*) FROM visits v WHERE v.clinic_code = c.clinic_code) AS visits FROM clinics c "
            "ORDER BY clinic_code",
            "CREATE TABLE fee_bands AS SELECT min(fee) AS fee_min, max(fee) AS fee_max, avg(fee) AS fee_avg "
            "FROM visits GROUP BY clinic_code ORDER BY clinic_code",
            "CREATE TABLE staff_shifts AS SELECT clinic_id, name, shift_hours FROM staff ORDER BY name",
        ],
        "labels": {
            "visit_log": OK,
            "clinic_summary": OK,
            "patient_visits": OK,
            "clinic_keys": OK,
            "fee_bands": OK,
            "staff_shifts": OK,
        },
    },
}


def replace(model: str, select: str) -> str:
    """A statement that rebuilds ``model`` from ``select`` (which reads the model as it was)."""
    return f"CREATE OR REPLACE TABLE {model} AS {select}"


@dataclass
class Case:
    name: str
    pipeline: str
    why: str
    #: statements run on the correct warehouse
    faults: list[str] = field(default_factory=list)
    #: model -> verdicts (models not named keep the pipeline's labels of a correct warehouse)
    labels: dict[str, Verdicts] = field(default_factory=dict)
    #: stage 1 passes (when it fails, every model is wrong under every comparator)
    stage1: bool = True
    #: model -> ground-truth text in place of the pipeline's (a defect of the ground truth itself)
    ground_truth: dict[str, str] = field(default_factory=dict)
    #: model -> the named differences of ``verified`` (rows, key, case) that decide it: Verified's own code gives
    #: the other verdict (oracle_verified.DIFFERENCES; docs/elt.md)
    differs: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def verdicts(self) -> dict[str, Verdicts]:
        base = dict(PIPELINES[self.pipeline]["labels"])
        if not self.stage1:
            return {m: WRONG for m in base}
        base.update(self.labels)
        return base


CS = "customer_summary"
DM = "driver_month"
DR = "daily_region"
SW = "shipment_weights"
PT = "port_totals"
VL = "visit_log"
CL = "clinic_summary"
PV = "patient_visits"
CK = "clinic_keys"
FB = "fee_bands"
SS = "staff_shifts"


def _cs(expr: str) -> list[str]:
    return [replace(CS, f"SELECT * REPLACE ({expr}) FROM {CS}")]


def _re(model: str, expr: str) -> list[str]:
    return [replace(model, f"SELECT * REPLACE ({expr}) FROM {model}")]


def _seen_text(days: int) -> list[str]:
    """visit_log's seen_at as text: the first ``days`` visits as the day only, the others with their time."""
    return _re(
        VL,
        f"CASE WHEN visit_id < {1001 + days} THEN strftime(seen_at, '%Y-%m-%d') "
        "ELSE strftime(seen_at, '%Y-%m-%d %H:%M:%S') END AS seen_at",
    )


CASES: list[Case] = [
    # -- correct warehouses ------------------------------------------------------------------------------
    Case("shop-correct", "shop", "the reference"),
    Case("fleet-correct", "fleet", "the reference: negative averages (the original rejects them)"),
    Case("market-correct", "market", "the reference"),
    Case("cargo-correct", "cargo", "the reference"),
    # -- values the CSV round trip makes equal ----------------------------------------------------------------
    Case(
        "zip-as-integer",
        "shop",
        "a digit-only code stored as a number: both sides read as 451",
        _cs("CAST(zip AS INTEGER) AS zip"),
    ),
    Case(
        "port-code-as-integer",
        "cargo",
        "codes '007' stored as 7: read as 7 on both sides",
        [replace(SW, f"SELECT * REPLACE (CAST(port_code AS INTEGER) AS port_code) FROM {SW}")],
    ),
    Case(
        "date-as-midnight-timestamp",
        "shop",
        "a date column as a midnight TIMESTAMP (date_trunc): written as dates",
        _cs("CAST(last_order AS TIMESTAMP) AS last_order"),
    ),
    Case(
        "month-as-midnight-timestamp",
        "fleet",
        "date_trunc's TIMESTAMP for a month: written as dates",
        [replace(DM, f"SELECT * REPLACE (CAST(month AS TIMESTAMP) AS month) FROM {DM}")],
    ),
    Case(
        "day-as-midnight-timestamp",
        "market",
        "the day as a midnight TIMESTAMP: written as dates",
        [replace(DR, f"SELECT * REPLACE (CAST(day AS TIMESTAMP) AS day) FROM {DR}")],
    ),
    Case(
        "booleans-as-text-true-false",
        "shop",
        "'true'/'false' text: read_csv makes them booleans",
        _cs("CASE WHEN is_member THEN 'true' ELSE 'false' END AS is_member"),
    ),
    Case(
        "booleans-as-text-TRUE-FALSE",
        "cargo",
        "'TRUE'/'FALSE' text: booleans too",
        [
            replace(
                SW, f"SELECT * REPLACE (CASE WHEN fragile THEN 'TRUE' ELSE 'FALSE' END AS fragile) FROM {SW}"
            )
        ],
    ),
    Case(
        "booleans-as-integers",
        "shop",
        "1/0 against True/False: booleans are numbers in the original",
        _cs("CAST(is_member AS INTEGER) AS is_member"),
    ),
    Case(
        "number-as-text",
        "shop",
        "spent stored as text: read back as floats",
        _cs("CAST(spent AS VARCHAR) AS spent"),
    ),
    Case(
        "number-as-decimal",
        "shop",
        "a DECIMAL: read_sql makes it a float",
        _cs("CAST(spent AS DECIMAL(10, 2)) AS spent"),
    ),
    Case(
        "integer-as-double",
        "cargo",
        "packages as 3.0: a number within 1%",
        [replace(SW, f"SELECT * REPLACE (CAST(packages AS DOUBLE) AS packages) FROM {SW}")],
    ),
    Case(
        "empty-text-for-null",
        "shop",
        "'' for NULL: pandas reads it as missing",
        _cs("coalesce(tier, '') AS tier"),
    ),
    Case(
        "None-text-for-null",
        "shop",
        "'None' for NULL: one of pandas' NULL tokens",
        _cs("coalesce(tier, 'None') AS tier"),
    ),
    Case("NA-text-for-null", "shop", "'NA' for NULL: a NULL token too", _cs("coalesce(tier, 'NA') AS tier")),
    Case(
        "empty-text-for-null-date",
        "cargo",
        "a date column as text with '' for NULL",
        [
            replace(
                SW,
                f"SELECT * REPLACE (coalesce(CAST(inspected_on AS VARCHAR), '') AS inspected_on) FROM {SW}",
            )
        ],
    ),
    Case(
        "nan-for-null",
        "market",
        "a NaN double where the ground truth has a value: NaN against a number matches "
        "in the original; NULL against a number is wrong under verified",
        [
            replace(
                DR,
                f"SELECT * REPLACE (CASE WHEN region = 'south' AND events = 1 THEN 'nan'::DOUBLE ELSE revenue END "
                f"AS revenue) FROM {DR}",
            )
        ],
        {DR: (True, True, False)},
    ),
    Case(
        "date-as-text",
        "fleet",
        "the month as ISO text",
        [replace(DM, f"SELECT * REPLACE (CAST(month AS VARCHAR) AS month) FROM {DM}")],
    ),
    Case(
        "id-as-text",
        "fleet",
        "driver_id as text '1': read back as 1",
        [replace(DM, f"SELECT * REPLACE (CAST(driver_id AS VARCHAR) AS driver_id) FROM {DM}")],
    ),
    Case(
        "model-as-view",
        "shop",
        "the data model as a VIEW (models may be views)",
        [f"ALTER TABLE {CS} RENAME TO cs_table", f"CREATE VIEW {CS} AS SELECT * FROM cs_table"],
    ),
    Case(
        "columns-reordered",
        "shop",
        "the same columns in another order: found by name",
        [
            replace(
                CS,
                f"SELECT last_order, spent, orders, tier, is_member, signup, zip, name, customer_id FROM {CS}",
            )
        ],
    ),
    Case(
        "extra-column",
        "cargo",
        "a column the ground truth lacks: ignored",
        [replace(SW, f"SELECT *, 'x' AS note FROM {SW}")],
    ),
    Case(
        "float-noise",
        "market",
        "622.3672 against 622.3672000000001: a float's last digit",
        [replace(DR, f"SELECT * REPLACE (revenue + 1e-13 AS revenue) FROM {DR}")],
    ),
    # -- NULL against numbers -------------------------------------------------------------------------------
    Case(
        "null-for-a-count",
        "shop",
        "NULL where the ground truth has 1: NaN against a number matches in the "
        "original; verified's NULL matches 0 only",
        _cs("CASE WHEN customer_id = 2 THEN NULL ELSE orders END AS orders"),
        {CS: (True, True, False)},
    ),
    Case(
        "null-for-packages",
        "cargo",
        "NULL packages where the ground truth has 5",
        [
            replace(
                SW,
                f"SELECT * REPLACE (CASE WHEN shipment = 'S-2' THEN NULL ELSE packages END AS packages) FROM {SW}",
            )
        ],
        {SW: (True, True, False)},
    ),
    Case(
        "null-for-a-negative",
        "fleet",
        "NULL where the ground truth has -3.5; Verified keys the rows on "
        "avg_delay_min (no id column is 80% distinct) and drops the row whose key is NULL",
        [
            replace(
                DM,
                f"SELECT * REPLACE (CASE WHEN trips = 2 THEN NULL ELSE avg_delay_min END AS avg_delay_min) FROM {DM}",
            )
        ],
        {DM: (False, True, False)},
        differs={DM: ("key", "rows")},
    ),
    Case(
        "percent-as-integer",
        "fleet",
        "on_time_pct rounded to whole numbers (67 for 66.67: within 1%)",
        [replace(DM, f"SELECT * REPLACE (CAST(on_time_pct AS INTEGER) AS on_time_pct) FROM {DM}")],
        {DM: (False, True, True)},
    ),
    # -- the 1% test at its edges -----------------------------------------------------------------------------
    Case("plus-half-percent", "shop", "spent 0.5% high", _cs("spent * 1.005 AS spent")),
    Case(
        "plus-one-percent-exactly",
        "shop",
        "spent * 1.01: on the bound, not beyond it",
        _cs("spent * 1.01 AS spent"),
    ),
    Case(
        "minus-one-percent-exactly",
        "shop",
        "spent * 0.99: on the original's lower bound (not below it); Verified's "
        "1% is of the larger value, and 12.75 - 12.75 * 0.99 is a float's hair above 0.1275: wrong there",
        _cs("spent * 0.99 AS spent"),
        {CS: (True, True, False)},
    ),
    Case(
        "plus-1.02-percent",
        "shop",
        "spent 1.02% high: beyond the bound",
        _cs("spent * 1.0102 AS spent"),
        {CS: WRONG},
    ),
    Case("minus-two-percent", "shop", "spent 2% low", _cs("spent * 0.98 AS spent"), {CS: WRONG}),
    Case(
        "integer-within-one-percent",
        "cargo",
        "an integer ground truth (2480) against a total 0.4% off: integers "
        "are numbers in the original too (no 'fix 2'); verified keys on the port code, not the first column",
        [replace(PT, f"SELECT * REPLACE (total_kg * 1.004 AS total_kg) FROM {PT}")],
    ),
    Case(
        "negative-half-percent",
        "fleet",
        "negative averages 0.5% off: the sign fix",
        [replace(DM, f"SELECT * REPLACE (avg_delay_min * 1.005 AS avg_delay_min) FROM {DM}")],
    ),
    Case(
        "negative-two-percent",
        "fleet",
        "negative averages 2% off",
        [replace(DM, f"SELECT * REPLACE (avg_delay_min * 1.02 AS avg_delay_min) FROM {DM}")],
        {DM: WRONG},
    ),
    Case(
        "measure-0.4-percent-keyed-on-text",
        "cargo",
        "a weight 0.4% off: verified keys the rows on the shipment, never on the weight",
        [replace(SW, f"SELECT * REPLACE (weight_kg * 1.004 AS weight_kg) FROM {SW}")],
    ),
    Case(
        "reordered-and-measure-off",
        "cargo",
        "port totals in another order and 0.4% off: keyed on the port code",
        [
            replace(
                PT,
                f"SELECT total_kg * 1.004 AS total_kg, shipments, port_code FROM {PT} ORDER BY port_code DESC",
            )
        ],
        {PT: (False, False, True)},
    ),
    # -- row faults ----------------------------------------------------------------------------------------------
    Case(
        "missing-row",
        "shop",
        "a customer left out (Verified compares the customers both sides have)",
        [f"DELETE FROM {CS} WHERE customer_id = 2"],
        {CS: WRONG},
        differs={CS: ("rows",)},
    ),
    Case(
        "extra-row",
        "cargo",
        "a shipment too many (Verified keys on packages and keeps the first row per key)",
        [f"INSERT INTO {SW} VALUES ('S-4', '120', 10.0, 1, false, NULL)"],
        {SW: WRONG},
        differs={SW: ("rows",)},
    ),
    Case(
        "duplicate-row",
        "market",
        "a row twice (Verified's own code drops duplicates; here it is an extra row)",
        [f"INSERT INTO {DR} SELECT * FROM {DR} WHERE region = 'north' AND day = DATE '2024-03-02'"],
        {DR: WRONG},
        differs={DR: ("rows",)},
    ),
    Case(
        "rows-reordered",
        "market",
        "no ORDER BY in the query and the rows in another order",
        [replace(DR, f"SELECT * FROM {DR} ORDER BY day DESC, region DESC")],
        {DR: (False, False, True)},
    ),
    Case("empty-model", "cargo", "the model with no rows", [f"DELETE FROM {PT}"], {PT: WRONG}),
    # -- column faults ---------------------------------------------------------------------------------------------
    Case(
        "missing-column",
        "shop",
        "tier left out",
        [replace(CS, f"SELECT * EXCLUDE (tier) FROM {CS}")],
        {CS: WRONG},
    ),
    Case(
        "upper-case-columns",
        "fleet",
        "the columns named in upper case: the original finds them by exact name",
        [
            replace(
                DM,
                "SELECT driver_id AS DRIVER_ID, month AS MONTH, trips AS TRIPS, avg_delay_min AS AVG_DELAY_MIN, "
                f"on_time_pct AS ON_TIME_PCT FROM {DM}",
            )
        ],
        differs={DM: ("case",)},
    ),
    Case(
        "upper-case-columns-positive",
        "cargo",
        "upper-case column names on a table of positive numbers",
        [
            replace(
                PT, f"SELECT total_kg AS TOTAL_KG, shipments AS SHIPMENTS, port_code AS PORT_CODE FROM {PT}"
            )
        ],
        {PT: (False, True, True)},
        differs={PT: ("case",)},
    ),
    Case(
        "model-missing", "cargo", "port_totals not built: its query fails", [f"DROP TABLE {PT}"], {PT: WRONG}
    ),
    # -- faults only some rules forgive ------------------------------------------------------------------------------
    Case(
        "booleans-as-yes-no",
        "shop",
        "'yes'/'no': text to the original, booleans to verified",
        _cs("CASE WHEN is_member THEN 'yes' ELSE 'no' END AS is_member"),
        {CS: (False, False, True)},
    ),
    Case(
        "date-as-full-timestamp",
        "shop",
        "the last order's timestamp for its day: one side holds dates only",
        _cs(
            "(SELECT max(ordered_at) FROM orders o WHERE o.customer_id = customer_summary.customer_id) AS last_order"
        ),
        {CS: (False, False, True)},
    ),
    Case(
        "timestamptz-for-timestamp",
        "market",
        "TIMESTAMPTZ for a timestamp: written with +00:00 by the original; "
        "to Verified a time with an offset never equals one without",
        [
            "SET TimeZone = 'UTC'",
            replace(DR, f"SELECT * REPLACE (CAST(first_at AS TIMESTAMPTZ) AS first_at) FROM {DR}"),
        ],
        {DR: WRONG},
    ),
    Case(
        "timestamptz-for-date",
        "shop",
        "TIMESTAMPTZ at midnight for a date: floored to the day, still with its offset",
        ["SET TimeZone = 'UTC'"] + _cs("CAST(last_order AS TIMESTAMPTZ) AS last_order"),
        {CS: WRONG},
    ),
    Case(
        "timestamp-milliseconds",
        "market",
        "first_at with milliseconds: verified compares to the second",
        [replace(DR, f"SELECT * REPLACE (first_at + INTERVAL 123 MILLISECOND AS first_at) FROM {DR}")],
        {DR: (False, False, True)},
    ),
    Case(
        "percent-as-fraction",
        "market",
        "share_pct written as a fraction (4 non-zero pairs)",
        [replace(DR, f"SELECT * REPLACE (share_pct / 100 AS share_pct) FROM {DR}")],
        {DR: (False, False, True)},
    ),
    Case(
        "percent-as-fraction-two-pairs",
        "fleet",
        "on_time_pct as a fraction: 2 non-zero pairs, too few to rescale",
        [replace(DM, f"SELECT * REPLACE (on_time_pct / 100 AS on_time_pct) FROM {DM}")],
        {DM: WRONG},
    ),
    Case(
        "text-trailing-space",
        "shop",
        "a name with a trailing space",
        _cs("CASE WHEN customer_id = 1 THEN name || ' ' ELSE name END AS name"),
        {CS: WRONG},
    ),
    Case(
        "text-case",
        "cargo",
        "a shipment id in lower case: Verified compares texts without regard to case",
        [f"UPDATE {SW} SET shipment = lower(shipment) WHERE shipment = 'S-1'"],
        {SW: (False, False, True)},
    ),
    # -- stage 1 ------------------------------------------------------------------------------------------------------
    Case(
        "source-as-view",
        "shop",
        "a source table loaded as a VIEW: not a loaded table",
        [
            "ALTER TABLE customers RENAME TO customers_raw",
            "CREATE VIEW customers AS SELECT * FROM customers_raw",
        ],
        stage1=False,
    ),
    Case(
        "source-row-missing",
        "cargo",
        "a source table one row short",
        ["DELETE FROM ports WHERE port_code = '120'"],
        stage1=False,
    ),
    Case("source-missing", "fleet", "a source table never loaded", ["DROP TABLE drivers"], stage1=False),
    Case(
        "source-in-another-schema",
        "market",
        "a source table in another schema",
        ["CREATE SCHEMA raw", "CREATE TABLE raw.regions AS SELECT * FROM regions", "DROP TABLE regions"],
        stage1=False,
    ),
    Case(
        "source-name-in-upper-case",
        "market",
        "a source table named in upper case (names fold case)",
        [
            "ALTER TABLE regions RENAME TO regions_x",
            "CREATE TABLE REGIONS AS SELECT * FROM regions_x",
            "DROP TABLE regions_x",
        ],
    ),
    # -- Verified's rules at their edges (the visits pipeline; Verified's quirks followed) ------------------------
    Case(
        "visits-correct",
        "visits",
        "the reference: six models (43 rows; a clinic code; no id 80% distinct; a "
        "surrogate key; measures only; an id exactly 80% distinct)",
    ),
    Case(
        "ground-truth-dates-81-percent",
        "visits",
        "the ground truth writes 35 of 43 times as the day only (81%: "
        "date-only): both sides compared to the day",
        ground_truth={VL: _visit_log(35)},
        labels={VL: (False, False, True)},
    ),
    Case(
        "ground-truth-dates-79-percent",
        "visits",
        "34 of 43 as the day only (79%: not date-only): compared to the second, a day is midnight",
        ground_truth={VL: _visit_log(34)},
        labels={VL: WRONG},
    ),
    Case(
        "produced-dates-81-percent",
        "visits",
        "the produced times as text, 35 of 43 the day only",
        _seen_text(35),
        {VL: (False, False, True)},
    ),
    Case("produced-dates-79-percent", "visits", "34 of 43 the day only", _seen_text(34), {VL: WRONG}),
    Case(
        "dates-for-timestamps",
        "visits",
        "the day for the ground truth's timestamps (one side date-only)",
        _re(VL, "CAST(seen_at AS DATE) AS seen_at"),
        {VL: (False, False, True)},
    ),
    Case(
        "timestamp-one-second-off",
        "market",
        "first_at a second late: floored to the second, still a second off",
        _re(DR, "first_at + INTERVAL 1 SECOND AS first_at"),
        {DR: WRONG},
    ),
    Case(
        "quoted-date",
        "shop",
        "the signup day in quotes: a time column is read from the raw values, quotes kept",
        _cs("'\"' || CAST(signup AS VARCHAR) || '\"' AS signup"),
        {CS: WRONG},
    ),
    Case(
        "date-with-leading-space",
        "shop",
        "' 2024-01-02': still date-only (stripped) and read by pandas as the day",
        _cs("' ' || CAST(signup AS VARCHAR) AS signup"),
        {CS: (False, False, True)},
    ),
    Case(
        "id-off-by-0.4-percent",
        "visits",
        "one visit_id 1047 for 1043: Verified keys on booking_id and finds 1047 "
        "within 1% of 1043; an identifying value is matched exactly here",
        [f"UPDATE {VL} SET visit_id = 1047 WHERE visit_id = 1043"],
        {VL: (True, True, False)},
        differs={VL: ("rows+key",)},
    ),
    Case(
        "booleans-as-t-f",
        "visits",
        "'t'/'f' for booleans: not boolean words to Verified",
        _re(CL, "CASE WHEN weekend THEN 't' ELSE 'f' END AS weekend"),
        {CL: WRONG},
    ),
    Case(
        "booleans-with-spaces",
        "visits",
        "' yes'/' no': boolean words once stripped",
        _re(CL, "CASE WHEN weekend THEN ' yes' ELSE ' no' END AS weekend"),
        {CL: (False, False, True)},
    ),
    Case(
        "booleans-in-mixed-case",
        "visits",
        "'Yes'/'NO'",
        _re(CL, "CASE WHEN weekend THEN 'Yes' ELSE 'NO' END AS weekend"),
        {CL: (False, False, True)},
    ),
    Case(
        "booleans-quoted",
        "visits",
        "'\"true\"'/'\"false\"': a boolean column is read from the raw values",
        _re(CL, "CASE WHEN weekend THEN '\"true\"' ELSE '\"false\"' END AS weekend"),
        {CL: WRONG},
    ),
    Case(
        "null-for-false",
        "visits",
        "NULL where the ground truth has False: 0 against NULL",
        _re(CL, "CASE WHEN clinic_code = 'C2' THEN NULL ELSE weekend END AS weekend"),
    ),
    Case(
        "zero-for-null",
        "visits",
        "0 where the ground truth has NULL",
        _re(CL, "coalesce(refunds, 0) AS refunds"),
    ),
    Case(
        "null-for-zero",
        "visits",
        "NULL where the ground truth has 0",
        _re(CL, "CASE WHEN clinic_code = 'C1' THEN NULL ELSE refunds END AS refunds"),
    ),
    Case(
        "zero-point-zero-for-null",
        "visits",
        "doubles, 0.0 where the ground truth has NULL",
        _re(CL, "CAST(coalesce(refunds, 0) AS DOUBLE) AS refunds"),
    ),
    Case(
        "null-for-two",
        "visits",
        "NULL where the ground truth has 2: NaN crosses no bound in the original; NULL "
        "matches NULL and 0 only in Verified",
        _re(CL, "CASE WHEN clinic_code = 'C3' THEN NULL ELSE refunds END AS refunds"),
        {CL: (True, True, False)},
    ),
    Case(
        "zero-text-for-null-text",
        "shop",
        "the text '0' where the ground truth has NULL (a text '0' is not 0)",
        _cs("coalesce(tier, '0') AS tier"),
        {CS: WRONG},
    ),
    Case(
        "percent-as-fraction-three-pairs",
        "visits",
        "visit shares as fractions: exactly 3 non-zero pairs",
        _re(CL, "visit_share_pct / 100 AS visit_share_pct"),
        {CL: (False, False, True)},
    ),
    Case(
        "negative-sign-flipped",
        "fleet",
        "the averages' signs flipped",
        _re(DM, "-avg_delay_min AS avg_delay_min"),
        {DM: WRONG},
    ),
    Case(
        "number-text-with-spaces",
        "shop",
        "spent as text with a leading space: read_csv reads numbers",
        _cs("' ' || CAST(spent AS VARCHAR) AS spent"),
    ),
    Case(
        "city-upper-case",
        "visits",
        "the cities in upper case: texts compare without regard to case",
        _re(CL, "upper(city) AS city"),
        {CL: (False, False, True)},
    ),
    Case(
        "name-upper-case",
        "shop",
        "the names in upper case",
        _cs("upper(name) AS name"),
        {CS: (False, False, True)},
    ),
    Case(
        "city-leading-space",
        "visits",
        "' Oslo': spaces count in a text",
        _re(CL, "' ' || city AS city"),
        {CL: WRONG},
    ),
    Case(
        "produced-quoted-text",
        "visits",
        "the produced cities in double quotes: dropped",
        _re(CL, "'\"' || city || '\"' AS city"),
        {CL: (False, False, True)},
    ),
    Case(
        "produced-single-quoted-text",
        "visits",
        "in single quotes: dropped",
        _re(CL, "'''' || city || '''' AS city"),
        {CL: (False, False, True)},
    ),
    Case(
        "produced-unmatched-quote",
        "visits",
        "one quote only: kept",
        _re(CL, "'\"' || city AS city"),
        {CL: WRONG},
    ),
    Case(
        "quotes-in-the-source-kept",
        "shop",
        "a source name with quotes ('\"Cy\"'), kept by the model and the ground truth",
        [
            "UPDATE customers SET name = '\"Cy\"' WHERE customer_id = 3",
            f"UPDATE {CS} SET name = '\"Cy\"' WHERE customer_id = 3",
        ],
        ground_truth={
            CS: "customer_id,name,zip,signup,is_member,tier,orders,spent,last_order\n"
            "1,Ann,0451,2024-01-02,True,gold,2,12.75,2024-05-03\n"
            "2,Bob,0007,2024-02-03,False,,1,7.0,2024-05-02\n"
            '3,"""Cy""",1200,2024-03-04,True,silver,2,5.5,2024-05-06\n'
        },
    ),
    Case(
        "quotes-in-the-source-dropped",
        "shop",
        "the source's quotes dropped by the model, kept by the ground truth: "
        "Verified drops a pair of quotes on either side",
        ["UPDATE customers SET name = '\"Cy\"' WHERE customer_id = 3"],
        ground_truth={
            CS: "customer_id,name,zip,signup,is_member,tier,orders,spent,last_order\n"
            "1,Ann,0451,2024-01-02,True,gold,2,12.75,2024-05-03\n"
            "2,Bob,0007,2024-02-03,False,,1,7.0,2024-05-02\n"
            '3,"""Cy""",1200,2024-03-04,True,silver,2,5.5,2024-05-06\n'
        },
        labels={CS: (False, False, True)},
    ),
    # -- row alignment: Verified's key against identifying columns ---------------------------------------------
    Case(
        "id-under-80-percent-reordered",
        "visits",
        "patient_visits in another order: no id 80% distinct, Verified "
        "keys on fee_total (a measure), kramabench on (patient_id, clinic_code)",
        [replace(PV, f"SELECT * FROM {PV} ORDER BY fee_total DESC")],
        {PV: (False, False, True)},
    ),
    Case(
        "measure-key-one-row-0.4-percent",
        "visits",
        "one fee_total 0.4% off: Verified drops that row (its key), kramabench compares it (within 1%)",
        _re(
            PV,
            "CASE WHEN patient_id = 2 AND clinic_code = 'C3' THEN fee_total * 1.004 ELSE fee_total END AS fee_total",
        ),
    ),
    Case(
        "measure-key-one-row-5-percent",
        "visits",
        "one fee_total 5% off: Verified drops that row, kramabench compares it",
        _re(
            PV,
            "CASE WHEN patient_id = 2 AND clinic_code = 'C3' THEN fee_total * 1.05 ELSE fee_total "
            "END AS fee_total",
        ),
        {PV: WRONG},
        differs={PV: ("key", "rows")},
    ),
    Case(
        "measure-key-values-cross",
        "visits",
        "every fee_total within 1% but two of clinic C1 cross: Verified finds "
        "no common key, sorts by every column and pairs patient 1 with patient 4",
        _re(
            PV,
            "fee_total * CASE WHEN patient_id = 1 AND clinic_code = 'C1' THEN 1.006 WHEN patient_id = 4 AND "
            "clinic_code = 'C1' THEN 0.995 ELSE 1.004 END AS fee_total",
        ),
        differs={PV: ("key",)},
    ),
    Case(
        "surrogate-key-reordered",
        "visits",
        "clinic_keys in another order: the surrogate key is never the key",
        [replace(CK, f"SELECT * FROM {CK} ORDER BY city DESC")],
        {CK: (False, False, True)},
    ),
    Case(
        "surrogate-key-other-hash",
        "visits",
        "another hash for the surrogate key: not a key, still compared",
        _re(CK, "md5(unique_clinic_id) AS unique_clinic_id"),
        {CK: WRONG},
    ),
    Case(
        "no-identifying-column-reordered",
        "visits",
        "fee_bands (measures only) in another order: both sides sorted",
        [replace(FB, f"SELECT * FROM {FB} ORDER BY fee_avg DESC")],
        {FB: (False, False, True)},
    ),
    Case(
        "no-identifying-column-0.4-percent",
        "visits",
        "fee_bands' averages 0.4% off",
        _re(FB, "fee_avg * 1.004 AS fee_avg"),
    ),
    Case(
        "repeated-key-case-reorders",
        "visits",
        "two names of clinic 1 in the other case: Verified (key clinic_id, "
        "repeated) sorts by every column and the case changes the order; kramabench keys on the name",
        [f"UPDATE {SS} SET name = CASE name WHEN 'Ann' THEN 'ann' WHEN 'bo' THEN 'Bo' ELSE name END"],
        {SS: (False, False, True)},
        differs={SS: ("key",)},
    ),
    Case(
        "repeated-key-extra-row",
        "visits",
        "a second row for 'bo' (clinic 1): Verified keeps the first row per clinic_id; here an extra row",
        [f"INSERT INTO {SS} VALUES (1, 'bo', 9.0)"],
        {SS: WRONG},
        differs={SS: ("rows",)},
    ),
    # -- the ground truth itself --------------------------------------------------------------------------------------
    Case(
        "ground-truth-quoted-text",
        "shop",
        "a ground truth with a quoted text ('\"gold\"'), as Verified found",
        ground_truth={
            CS: "customer_id,name,zip,signup,is_member,tier,orders,spent,last_order\n"
            '1,Ann,0451,2024-01-02,True,"""gold""",2,12.75,2024-05-03\n'
            "2,Bob,0007,2024-02-03,False,,1,7.0,2024-05-02\n"
            "3,Cy,1200,2024-03-04,True,silver,2,5.5,2024-05-06\n"
        },
        labels={CS: (False, False, True)},
    ),
    Case(
        "ground-truth-row-too-long",
        "cargo",
        "a ground-truth row with one field too many: read_csv refuses the file",
        ground_truth={PT: "total_kg,shipments,port_code\n2480,2,007\n2250,1,120,9\n"},
        labels={PT: WRONG},
    ),
    Case(
        "ground-truth-row-too-short",
        "cargo",
        "a ground-truth row one field short: read_csv pads it with NaN, "
        "which matches any number in the original",
        ground_truth={PT: "total_kg,shipments,port_code\n2480,2,007\n2250,1\n"},
        labels={PT: (True, True, False)},
    ),
]


def write_corpus_suite(root: Path, name: str = "corpus") -> Path:
    """The corpus's pipelines as a suite on disk (their data, queries and ground truth)."""
    return write_suite(root, {pid: p["spec"] for pid, p in PIPELINES.items()}, name=name)


def build_warehouse(case: Case, folder: Path) -> Path:
    """The case's warehouse, ``<folder>/<pipeline>.duckdb`` (its catalog named as the pipeline)."""
    import duckdb

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{case.pipeline}.duckdb"
    con = duckdb.connect(str(path))
    try:
        for q in [*PIPELINES[case.pipeline]["build"], *case.faults]:
            con.execute(q)
    finally:
        con.close()
    return path


__all__ = ["CASES", "PIPELINES", "Case", "Verdicts", "build_warehouse", "write_corpus_suite"]
