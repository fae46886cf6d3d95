"""Deterministic generator of the bundled ``elt-mini`` suite (an ELT suite in kramabench's format, docs/elt.md).

Three pipelines that together use every source kind, with data models that need joins, aggregates, NULLs,
booleans, percentages and dates:

* ``bookshop``: PostgreSQL (customers, orders) and the REST API (books);
* ``clinic``: flat files (patients as csv, visits as jsonl) and S3 (doctors, served as parquet);
* ``fleet``: MongoDB (trips), PostgreSQL (vehicles) and S3 (drivers, served as jsonl).

Every name and number is invented here from a fixed seed. The ground truth of each data model is computed
by this script in plain Python from the generated rows (never by running the reference solutions, which
are SQL in ``solutions/<id>/``), and written as CSV (empty = NULL, booleans ``true``/``false``, dates
``YYYY-MM-DD``, numbers unrounded).

Usage::

    python workloads/elt-mini/generate.py            # rewrite workloads/elt-mini/{suite.yaml,pipelines/}
    python workloads/elt-mini/generate.py --out DIR  # write DIR/ instead
    python workloads/elt-mini/generate.py --check    # exit 1 if the committed files differ from a rerun

Only Python's own ``random.Random`` on a seeded instance is used, so a rerun reproduces the files byte for
byte. The reference solutions (``solutions/<id>/``: ``run.sh``, ``load.py``, a dbt project) are written by
hand and not touched by this script.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEED = 20240523
SCHEMA = "main"


# ---------------------------------------------------------------------------------------------- helpers
def csv_text(columns: list[str], rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([_cell(r.get(c)) for c in columns])
    return buf.getvalue()


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    return str(v)


def jsonl_text(rows: list[dict[str, Any]]) -> str:
    def conv(v: Any) -> Any:
        if isinstance(v, dt.datetime):
            return v.isoformat()
        if isinstance(v, dt.date):
            return v.isoformat()
        return v

    return "".join(json.dumps({k: conv(v) for k, v in r.items()}, ensure_ascii=False) + "\n" for r in rows)


def schema_csv(described: list[tuple[str, str]]) -> str:
    return csv_text(
        ["column_name", "column_description"],
        [{"column_name": c, "column_description": d} for c, d in described],
    )


def yaml_text(doc: Any) -> str:
    import yaml

    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


class Files:
    """The files of the suite, collected in memory (path relative to the suite root -> text)."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}

    def add(self, rel: str, text: str) -> None:
        self.files[rel] = text


FIRST = [
    "Ada",
    "Bram",
    "Cleo",
    "Dara",
    "Elio",
    "Fenna",
    "Gus",
    "Hedda",
    "Ivo",
    "Juno",
    "Kees",
    "Lotte",
    "Mads",
    "Nina",
    "Otto",
    "Pia",
    "Quin",
    "Rosa",
    "Sten",
    "Tess",
    "Ugo",
    "Vera",
    "Wim",
    "Xena",
    "Yara",
    "Zeno",
]
LAST = [
    "Arbel",
    "Brisk",
    "Corvin",
    "Dalmo",
    "Eskel",
    "Farrow",
    "Grell",
    "Holt",
    "Ivers",
    "Jansk",
    "Korbel",
    "Lindqvist",
    "Morrow",
    "Nadel",
    "Oster",
    "Prell",
    "Quarry",
    "Rask",
    "Sollen",
    "Tarrow",
]


def person(rnd: random.Random) -> str:
    return f"{rnd.choice(FIRST)} {rnd.choice(LAST)}"


def day(start: dt.date, rnd: random.Random, span: int) -> dt.date:
    return start + dt.timedelta(days=rnd.randrange(span))


# ---------------------------------------------------------------------------------------------- bookshop
def bookshop(rnd: random.Random, out: Files) -> None:
    pid = "bookshop"
    genres = ["fiction", "history", "science", "poetry", "travel"]
    adjectives = [
        "Silent",
        "Amber",
        "Crooked",
        "Northern",
        "Hollow",
        "Bright",
        "Last",
        "Paper",
        "Iron",
        "Quiet",
    ]
    nouns = [
        "Harbour",
        "Orchard",
        "Lantern",
        "Atlas",
        "Meadow",
        "Engine",
        "River",
        "Garden",
        "Clock",
        "Bridge",
    ]
    books = []
    for i in range(1, 41):
        books.append(
            {
                "book_id": i,
                "title": f"The {rnd.choice(adjectives)} {rnd.choice(nouns)}",
                "genre": genres[(i * 7 + rnd.randrange(3)) % len(genres)],
                "list_price": round(rnd.uniform(6, 45), 2),
                "published_on": day(dt.date(1990, 1, 1), rnd, 12000),
                "in_print": rnd.random() < 0.7,
            }
        )
    cities = ["Vellmar", "Ostrand", "Kirra", "Dunmore", "Saltby"]
    customers = []
    for i in range(1, 31):
        customers.append(
            {
                "customer_id": i,
                "name": person(rnd),
                "city": rnd.choice(cities),
                "signup_date": day(dt.date(2021, 1, 1), rnd, 1000),
                "is_member": rnd.random() < 0.4,
                "email": None if rnd.random() < 0.2 else f"reader{i}@example.invalid",
            }
        )
    orders = []
    buyers = [c["customer_id"] for c in customers if c["customer_id"] <= 27]  # 28-30 never ordered
    for i in range(1, 201):
        b = rnd.choice(books)
        orders.append(
            {
                "order_id": 1000 + i,
                "customer_id": rnd.choice(buyers),
                "book_id": b["book_id"],
                "quantity": rnd.randint(1, 4),
                "unit_price": b["list_price"],
                "order_date": day(dt.date(2024, 1, 1), rnd, 360),
                "discount_pct": rnd.choice([None, None, None, 5, 10, 15]),
            }
        )

    def paid(o: dict[str, Any]) -> float:
        return o["quantity"] * o["unit_price"] * (1 - (o["discount_pct"] or 0) / 100)

    spend = []
    for c in customers:
        mine = [o for o in orders if o["customer_id"] == c["customer_id"]]
        spend.append(
            {
                "customer_id": c["customer_id"],
                "customer_name": c["name"],
                "orders": len(mine),
                "books_bought": sum(o["quantity"] for o in mine),
                "total_spent": sum(paid(o) for o in mine) if mine else 0.0,
                "first_order_date": min(o["order_date"] for o in mine) if mine else None,
                "is_member": c["is_member"],
            }
        )
    by_book = {b["book_id"]: b for b in books}
    total = sum(paid(o) for o in orders)
    sales = []
    for g in sorted({by_book[o["book_id"]]["genre"] for o in orders}):
        mine = [o for o in orders if by_book[o["book_id"]]["genre"] == g]
        revenue = sum(paid(o) for o in mine)
        sales.append(
            {
                "genre": g,
                "books_sold": sum(o["quantity"] for o in mine),
                "revenue": revenue,
                "revenue_share_pct": 100 * revenue / total,
                "titles_in_print": sum(1 for b in books if b["genre"] == g and b["in_print"]),
            }
        )

    base = f"pipelines/{pid}"
    cols = {
        "customers": ["customer_id", "name", "city", "signup_date", "is_member", "email"],
        "orders": [
            "order_id",
            "customer_id",
            "book_id",
            "quantity",
            "unit_price",
            "order_date",
            "discount_pct",
        ],
    }
    out.add(f"{base}/data/customers.csv", csv_text(cols["customers"], customers))
    out.add(f"{base}/data/orders.csv", csv_text(cols["orders"], orders))
    out.add(f"{base}/data/books.jsonl", jsonl_text(books))
    out.add(
        f"{base}/schemas/customers.csv",
        schema_csv(
            [
                ("customer_id", "identifier of the customer"),
                ("name", "the customer's name"),
                ("city", "home city"),
                ("signup_date", "the day the customer signed up"),
                ("is_member", "whether the customer is a club member"),
                ("email", "e-mail address, empty when unknown"),
            ]
        ),
    )
    out.add(
        f"{base}/schemas/orders.csv",
        schema_csv(
            [
                ("order_id", "identifier of the order line"),
                ("customer_id", "who ordered"),
                ("book_id", "the book ordered"),
                ("quantity", "copies ordered"),
                ("unit_price", "price of one copy before any discount"),
                ("order_date", "the day of the order"),
                (
                    "discount_pct",
                    "discount on the line in percent (5 means 5%); empty when there was no discount",
                ),
            ]
        ),
    )
    out.add(
        f"{base}/schemas/books.csv",
        schema_csv(
            [
                ("book_id", "identifier of the book"),
                ("title", "title"),
                ("genre", "genre"),
                ("list_price", "current list price"),
                ("published_on", "publication day"),
                ("in_print", "whether the book is still in print"),
            ]
        ),
    )
    pipeline = {
        "sources": {"postgres": ["customers", "orders"], "rest": ["books"]},
        "tables": {"customers": len(customers), "orders": len(orders), "books": len(books)},
        "models": [
            {
                "name": "customer_spend",
                "description": "one row per customer, with what the customer ordered "
                "(customers without orders included)",
                "columns": [
                    {"name": "customer_id", "description": "the customer"},
                    {"name": "customer_name", "description": "the customer's name"},
                    {"name": "orders", "description": "number of order lines of the customer (0 when none)"},
                    {"name": "books_bought", "description": "copies ordered in all (0 when none)"},
                    {
                        "name": "total_spent",
                        "description": "sum over the customer's order lines of quantity x unit "
                        "price, less the line's discount; 0 when the customer has no orders; not rounded",
                    },
                    {
                        "name": "first_order_date",
                        "description": "the day of the customer's first order; NULL when "
                        "the customer has no orders",
                    },
                    {"name": "is_member", "description": "whether the customer is a club member (boolean)"},
                ],
            },
            {
                "name": "genre_sales",
                "description": "one row per genre with at least one order line",
                "columns": [
                    {"name": "genre", "description": "the genre"},
                    {"name": "books_sold", "description": "copies of the genre's books ordered"},
                    {
                        "name": "revenue",
                        "description": "sum of quantity x unit price less discounts over the genre's "
                        "order lines; not rounded",
                    },
                    {
                        "name": "revenue_share_pct",
                        "description": "the genre's revenue as a percentage of all revenue "
                        "(0 to 100; not rounded)",
                    },
                    {
                        "name": "titles_in_print",
                        "description": "number of the genre's books (ordered or not) that are in print",
                    },
                ],
            },
        ],
    }
    out.add(f"{base}/pipeline.yaml", yaml_text(pipeline))
    out.add(
        f"{base}/evaluation/customer_spend.sql",
        f"SELECT * FROM {pid}.{SCHEMA}.customer_spend ORDER BY customer_id;\n",
    )
    out.add(
        f"{base}/evaluation/genre_sales.sql", f"SELECT * FROM {pid}.{SCHEMA}.genre_sales ORDER BY genre;\n"
    )
    out.add(
        f"{base}/ground_truth/customer_spend.csv",
        csv_text(
            [
                "customer_id",
                "customer_name",
                "orders",
                "books_bought",
                "total_spent",
                "first_order_date",
                "is_member",
            ],
            spend,
        ),
    )
    out.add(
        f"{base}/ground_truth/genre_sales.csv",
        csv_text(["genre", "books_sold", "revenue", "revenue_share_pct", "titles_in_print"], sales),
    )


# ---------------------------------------------------------------------------------------------- clinic
def clinic(rnd: random.Random, out: Files) -> None:
    pid = "clinic"
    specialties = ["cardiology", "dermatology", "general practice", "neurology", "paediatrics"]
    doctors = []
    for i in range(1, 9):
        doctors.append(
            {
                "doctor_id": f"D{i:02d}",
                "name": f"Dr. {person(rnd)}",
                "specialty": specialties[(i + rnd.randrange(2)) % len(specialties)],
                "hired_on": day(dt.date(2005, 1, 1), rnd, 6000),
            }
        )
    insurers = ["Helvo", "Marisk", "Quellant"]
    patients = []
    for i in range(1, 61):
        patients.append(
            {
                "patient_id": i,
                "name": person(rnd),
                "birth_date": day(dt.date(1940, 1, 1), rnd, 28000),
                "smoker": rnd.random() < 0.25,
                "insurer": None if rnd.random() < 0.25 else rnd.choice(insurers),
            }
        )
    diagnoses = ["J06.9", "I10", "L20.9", "G43.0", "E11.9", "M54.5"]
    working = [d["doctor_id"] for d in doctors if d["doctor_id"] != "D08"]  # D08 has not seen anybody yet
    seen = [p["patient_id"] for p in patients if p["patient_id"] <= 55]  # 56-60 never visited
    visits = []
    for i in range(1, 301):
        visits.append(
            {
                "visit_id": 5000 + i,
                "patient_id": rnd.choice(seen),
                "doctor_id": rnd.choice(working),
                "visit_date": day(dt.date(2023, 6, 1), rnd, 400),
                "fee": round(rnd.uniform(40, 260), 2),
                "follow_up": rnd.random() < 0.3,
                "diagnosis": None if rnd.random() < 0.3 else rnd.choice(diagnoses),
            }
        )
    workload = []
    for d in doctors:
        mine = [v for v in visits if v["doctor_id"] == d["doctor_id"]]
        workload.append(
            {
                "doctor_id": d["doctor_id"],
                "doctor_name": d["name"],
                "specialty": d["specialty"],
                "visits": len(mine),
                "distinct_patients": len({v["patient_id"] for v in mine}),
                "total_fees": sum(v["fee"] for v in mine) if mine else 0.0,
                "follow_up_rate_pct": 100 * sum(1 for v in mine if v["follow_up"]) / len(mine)
                if mine
                else None,
                "last_visit_date": max(v["visit_date"] for v in mine) if mine else None,
            }
        )
    pv = []
    for p in patients:
        mine = [v for v in visits if v["patient_id"] == p["patient_id"]]
        pv.append(
            {
                "patient_id": p["patient_id"],
                "visits": len(mine),
                "first_visit_date": min(v["visit_date"] for v in mine) if mine else None,
                "smoker": p["smoker"],
                "insured": p["insurer"] is not None,
                "diagnosed_visits_pct": 100 * sum(1 for v in mine if v["diagnosis"] is not None) / len(mine)
                if mine
                else None,
            }
        )

    base = f"pipelines/{pid}"
    out.add(
        f"{base}/data/patients.csv",
        csv_text(["patient_id", "name", "birth_date", "smoker", "insurer"], patients),
    )
    out.add(f"{base}/data/visits.jsonl", jsonl_text(visits))
    out.add(f"{base}/data/doctors.csv", csv_text(["doctor_id", "name", "specialty", "hired_on"], doctors))
    out.add(
        f"{base}/schemas/patients.csv",
        schema_csv(
            [
                ("patient_id", "identifier of the patient"),
                ("name", "the patient's name"),
                ("birth_date", "day of birth"),
                ("smoker", "whether the patient smokes"),
                ("insurer", "the patient's health insurer; empty when uninsured"),
            ]
        ),
    )
    out.add(
        f"{base}/schemas/visits.csv",
        schema_csv(
            [
                ("visit_id", "identifier of the visit"),
                ("patient_id", "the patient"),
                ("doctor_id", "the doctor"),
                ("visit_date", "day of the visit"),
                ("fee", "fee charged"),
                ("follow_up", "whether a follow-up visit was ordered"),
                ("diagnosis", "ICD-10 code of the diagnosis; null when none was made"),
            ]
        ),
    )
    out.add(
        f"{base}/schemas/doctors.csv",
        schema_csv(
            [
                ("doctor_id", "identifier of the doctor"),
                ("name", "the doctor's name"),
                ("specialty", "specialty"),
                ("hired_on", "the day the doctor joined the clinic"),
            ]
        ),
    )
    pipeline = {
        "sources": {
            "files": [{"table": "patients", "format": "csv"}, {"table": "visits", "format": "jsonl"}],
            "s3": [{"table": "doctors", "format": "parquet"}],
        },
        "tables": {"patients": len(patients), "visits": len(visits), "doctors": len(doctors)},
        "models": [
            {
                "name": "doctor_workload",
                "description": "one row per doctor (doctors without visits included)",
                "columns": [
                    {"name": "doctor_id", "description": "the doctor"},
                    {"name": "doctor_name", "description": "the doctor's name"},
                    {"name": "specialty", "description": "the doctor's specialty"},
                    {"name": "visits", "description": "number of visits with the doctor (0 when none)"},
                    {
                        "name": "distinct_patients",
                        "description": "number of different patients seen (0 when none)",
                    },
                    {
                        "name": "total_fees",
                        "description": "sum of the fees of the doctor's visits (0 when none)",
                    },
                    {
                        "name": "follow_up_rate_pct",
                        "description": "percentage (0 to 100) of the doctor's visits that "
                        "ordered a follow-up; NULL when the doctor has no visits",
                    },
                    {
                        "name": "last_visit_date",
                        "description": "the day of the doctor's latest visit; NULL when none",
                    },
                ],
            },
            {
                "name": "patient_visits",
                "description": "one row per patient (patients without visits included)",
                "columns": [
                    {"name": "patient_id", "description": "the patient"},
                    {"name": "visits", "description": "number of the patient's visits (0 when none)"},
                    {
                        "name": "first_visit_date",
                        "description": "the day of the patient's first visit; NULL when none",
                    },
                    {"name": "smoker", "description": "whether the patient smokes (boolean)"},
                    {"name": "insured", "description": "whether the patient has a health insurer (boolean)"},
                    {
                        "name": "diagnosed_visits_pct",
                        "description": "percentage (0 to 100) of the patient's visits "
                        "with a diagnosis; NULL when the patient has no visits",
                    },
                ],
            },
        ],
    }
    out.add(f"{base}/pipeline.yaml", yaml_text(pipeline))
    out.add(
        f"{base}/evaluation/doctor_workload.sql",
        f"SELECT * FROM {pid}.{SCHEMA}.doctor_workload ORDER BY doctor_id;\n",
    )
    out.add(
        f"{base}/evaluation/patient_visits.sql",
        f"SELECT * FROM {pid}.{SCHEMA}.patient_visits ORDER BY patient_id;\n",
    )
    out.add(
        f"{base}/ground_truth/doctor_workload.csv",
        csv_text(
            [
                "doctor_id",
                "doctor_name",
                "specialty",
                "visits",
                "distinct_patients",
                "total_fees",
                "follow_up_rate_pct",
                "last_visit_date",
            ],
            workload,
        ),
    )
    out.add(
        f"{base}/ground_truth/patient_visits.csv",
        csv_text(
            ["patient_id", "visits", "first_visit_date", "smoker", "insured", "diagnosed_visits_pct"], pv
        ),
    )


# ---------------------------------------------------------------------------------------------- fleet
def fleet(rnd: random.Random, out: Files) -> None:
    pid = "fleet"
    models = [
        ("Kestrel L", 1200, False),
        ("Kestrel E", 1000, True),
        ("Ferro 7", 3500, False),
        ("Volta Cargo", 2200, True),
    ]
    vehicles = []
    for i in range(1, 13):
        m = models[rnd.randrange(len(models))]
        vehicles.append(
            {
                "vehicle_id": f"V{i:02d}",
                "plate": f"KB-{rnd.randrange(100, 999)}-{chr(65 + rnd.randrange(26))}{chr(65 + rnd.randrange(26))}",
                "model": m[0],
                "capacity_kg": m[1],
                "electric": m[2],
            }
        )
    drivers = []
    for i in range(1, 11):
        drivers.append(
            {
                "driver_id": i,
                "name": person(rnd),
                "licensed_since": day(dt.date(1995, 1, 1), rnd, 9000),
                "active": i != 10,
            }
        )
    trips = []
    for i in range(1, 251):
        v = rnd.choice(vehicles)
        start = dt.datetime(2024, 1, 1, 6, 0) + dt.timedelta(
            days=rnd.randrange(120), minutes=15 * rnd.randrange(48)
        )
        planned = rnd.randrange(30, 240, 5)
        actual = max(10, planned + rnd.randrange(-25, 40))
        trips.append(
            {
                "trip_id": i,
                "vehicle_id": v["vehicle_id"],
                "driver_id": rnd.randint(1, 9),
                "start_time": start,
                "end_time": start + dt.timedelta(minutes=actual),
                "planned_minutes": planned,
                "distance_km": None if rnd.random() < 0.1 else round(rnd.uniform(5, 180), 1),
                "cargo_kg": rnd.randrange(0, v["capacity_kg"] + 1, 50),
            }
        )
    util = []
    for v in vehicles:
        mine = [t for t in trips if t["vehicle_id"] == v["vehicle_id"]]
        dist = [t["distance_km"] for t in mine if t["distance_km"] is not None]
        util.append(
            {
                "vehicle_id": v["vehicle_id"],
                "plate": v["plate"],
                "electric": v["electric"],
                "trips": len(mine),
                "total_distance_km": sum(dist) if dist else None,
                "trips_without_distance": sum(1 for t in mine if t["distance_km"] is None),
                "avg_load_pct": sum(100 * t["cargo_kg"] / v["capacity_kg"] for t in mine) / len(mine)
                if mine
                else None,
            }
        )
    active = {d["driver_id"]: d["active"] for d in drivers}
    groups: dict[tuple[int, dt.date], list[dict[str, Any]]] = {}
    for t in trips:
        groups.setdefault((t["driver_id"], t["start_time"].date().replace(day=1)), []).append(t)
    monthly = []
    for (did, month), mine in sorted(groups.items()):
        delays = [
            int((t["end_time"] - t["start_time"]).total_seconds() // 60) - t["planned_minutes"] for t in mine
        ]
        monthly.append(
            {
                "driver_id": did,
                "month": month,
                "trips": len(mine),
                "avg_delay_min": sum(delays) / len(delays),
                "on_time_pct": 100 * sum(1 for x in delays if x <= 0) / len(delays),
                "active": active[did],
            }
        )

    base = f"pipelines/{pid}"
    docs = [{"_id": f"trip-{t['trip_id']:04d}", **t} for t in trips]
    out.add(f"{base}/data/trips.jsonl", jsonl_text(docs))
    out.add(
        f"{base}/data/vehicles.csv",
        csv_text(["vehicle_id", "plate", "model", "capacity_kg", "electric"], vehicles),
    )
    out.add(f"{base}/data/drivers.csv", csv_text(["driver_id", "name", "licensed_since", "active"], drivers))
    out.add(
        f"{base}/schemas/trips.csv",
        schema_csv(
            [
                ("_id", "MongoDB document id"),
                ("trip_id", "identifier of the trip"),
                ("vehicle_id", "the vehicle"),
                ("driver_id", "the driver"),
                ("start_time", "when the trip started (local time)"),
                ("end_time", "when the trip ended (local time)"),
                ("planned_minutes", "the planned duration in minutes"),
                ("distance_km", "distance driven in km; null when the GPS failed"),
                ("cargo_kg", "load carried in kg"),
            ]
        ),
    )
    out.add(
        f"{base}/schemas/vehicles.csv",
        schema_csv(
            [
                ("vehicle_id", "identifier of the vehicle"),
                ("plate", "licence plate"),
                ("model", "vehicle model"),
                ("capacity_kg", "the most the vehicle may carry, in kg"),
                ("electric", "whether the vehicle is electric"),
            ]
        ),
    )
    out.add(
        f"{base}/schemas/drivers.csv",
        schema_csv(
            [
                ("driver_id", "identifier of the driver"),
                ("name", "the driver's name"),
                ("licensed_since", "the day the driver got the licence"),
                ("active", "whether the driver still works here"),
            ]
        ),
    )
    pipeline = {
        "sources": {
            "mongodb": ["trips"],
            "postgres": ["vehicles"],
            "s3": [{"table": "drivers", "format": "jsonl"}],
        },
        "tables": {"trips": len(trips), "vehicles": len(vehicles), "drivers": len(drivers)},
        "models": [
            {
                "name": "vehicle_utilisation",
                "description": "one row per vehicle (vehicles without trips included)",
                "columns": [
                    {"name": "vehicle_id", "description": "the vehicle"},
                    {"name": "plate", "description": "its licence plate"},
                    {"name": "electric", "description": "whether it is electric (boolean)"},
                    {"name": "trips", "description": "number of its trips (0 when none)"},
                    {
                        "name": "total_distance_km",
                        "description": "sum of the known distances of its trips; NULL when "
                        "no distance is known",
                    },
                    {
                        "name": "trips_without_distance",
                        "description": "number of its trips whose distance is unknown",
                    },
                    {
                        "name": "avg_load_pct",
                        "description": "mean over its trips of the load as a percentage of the "
                        "vehicle's capacity (0 to 100); NULL when it has no trips",
                    },
                ],
            },
            {
                "name": "driver_month",
                "description": "one row per driver and calendar month in which the driver "
                "started at least one trip",
                "columns": [
                    {"name": "driver_id", "description": "the driver"},
                    {
                        "name": "month",
                        "description": "the first day of the month the trips started in (a date)",
                    },
                    {"name": "trips", "description": "number of trips"},
                    {
                        "name": "avg_delay_min",
                        "description": "mean over the trips of (minutes from start to end, less "
                        "the planned minutes); negative when the trips were early on average",
                    },
                    {
                        "name": "on_time_pct",
                        "description": "percentage (0 to 100) of the trips that took no longer than planned",
                    },
                    {"name": "active", "description": "whether the driver still works here (boolean)"},
                ],
            },
        ],
    }
    out.add(f"{base}/pipeline.yaml", yaml_text(pipeline))
    out.add(
        f"{base}/evaluation/vehicle_utilisation.sql",
        f"SELECT * FROM {pid}.{SCHEMA}.vehicle_utilisation ORDER BY vehicle_id;\n",
    )
    out.add(
        f"{base}/evaluation/driver_month.sql",
        f"SELECT * FROM {pid}.{SCHEMA}.driver_month ORDER BY driver_id, month;\n",
    )
    out.add(
        f"{base}/ground_truth/vehicle_utilisation.csv",
        csv_text(
            [
                "vehicle_id",
                "plate",
                "electric",
                "trips",
                "total_distance_km",
                "trips_without_distance",
                "avg_load_pct",
            ],
            util,
        ),
    )
    out.add(
        f"{base}/ground_truth/driver_month.csv",
        csv_text(["driver_id", "month", "trips", "avg_delay_min", "on_time_pct", "active"], monthly),
    )


# ---------------------------------------------------------------------------------------------- main
def build() -> dict[str, str]:
    out = Files()
    out.add(
        "suite.yaml",
        yaml_text(
            {
                "family": "elt",
                "name": "elt-mini",
                "description": "three invented ELT pipelines that together use every source kind (PostgreSQL, REST API, "
                "flat files, S3, MongoDB); generated by generate.py",
                "version": "1",
                "schema": SCHEMA,
                "content": "complete",
            }
        ),
    )
    for i, make in enumerate((bookshop, clinic, fleet)):
        make(random.Random(SEED + i), out)
    return out.files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE, help="the suite root to write (default: this folder)")
    ap.add_argument(
        "--check", action="store_true", help="compare with the files on disk; exit 1 if any differs"
    )
    args = ap.parse_args()
    files = build()
    if args.check:
        bad = [
            rel
            for rel, text in files.items()
            if not (args.out / rel).is_file() or (args.out / rel).read_text(encoding="utf-8") != text
        ]
        for rel in bad:
            print(f"differs: {rel}", file=sys.stderr)
        return 1 if bad else 0
    for rel, text in files.items():
        path = args.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    print(f"wrote {len(files)} files under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
