"""Extract and load: every source table named in the task's config.yaml, copied whole into the DuckDB warehouse.

Usage: python load.py TASK_FOLDER   (the warehouse file is written in the working directory)

PostgreSQL is read with psycopg, the REST API with urllib (one GET per table), flat files, S3 objects and
MongoDB collections from the files or servers config.yaml names. Every table keeps its source's name; the
values keep their source types where the source has types (PostgreSQL, parquet) and are loaded as they
come otherwise (JSON, CSV); the data models (dbt) cast what they need.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

import duckdb
import pyarrow as pa
import yaml


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def reader(path: Path, fmt: str) -> str:
    if fmt == "csv":
        return f"read_csv({lit(str(path))}, header=true)"
    if fmt == "jsonl":
        return f"read_json({lit(str(path))}, format='newline_delimited')"
    if fmt == "parquet":
        return f"read_parquet({lit(str(path))})"
    raise SystemExit(f"unknown format {fmt!r}")


def load_rows(con: duckdb.DuckDBPyConnection, schema: str, table: str, rows: list[dict]) -> None:
    data = pa.Table.from_pylist(rows)  # noqa: F841 - read by DuckDB through its name
    con.execute(f"CREATE OR REPLACE TABLE {ident(schema)}.{ident(table)} AS SELECT * FROM data")


def main() -> int:
    task = Path(sys.argv[1])
    cfg = yaml.safe_load((task / "config.yaml").read_text())
    wh = cfg["warehouse"]
    schema = wh.get("schema", "main")
    con = duckdb.connect(wh["path"])
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {ident(schema)}")

    if "postgres" in cfg:
        import psycopg

        pg = cfg["postgres"]["config"]
        with psycopg.connect(host=pg["host"], port=pg["port"], user=pg["user"], password=pg["password"],
                             dbname=pg["database"]) as pgc:
            for table in pg["tables"]:
                with pgc.cursor() as cur:
                    cur.execute(f"SELECT * FROM {pg.get('schema', 'public')}.{ident(table)}")
                    names = [d.name for d in cur.description]
                    rows = [dict(zip(names, r)) for r in cur.fetchall()]
                load_rows(con, schema, table, rows)

    if "custom_api" in cfg:
        api = cfg["custom_api"]["config"]
        for table in api["tables"]:
            with urllib.request.urlopen(f"{api['base_url']}/{table}", timeout=60) as resp:
                rows = json.load(resp)
            load_rows(con, schema, table, rows)

    for item in cfg.get("flat_files", []):
        con.execute(f"CREATE OR REPLACE TABLE {ident(schema)}.{ident(item['table'])} AS "
                    f"SELECT * FROM {reader(task / item['path'], item['format'])}")

    if "aws_s3" in cfg:
        s3 = cfg["aws_s3"]
        for item in s3["data"]:
            fmt = item["path"].rsplit(".", 1)[-1]
            if "local_path" in item:  # the objects are files of the task folder
                src = task / item["local_path"]
            else:  # an S3-compatible server: the object downloaded with boto3 first
                import boto3

                client = boto3.client("s3", endpoint_url=s3["AWS_ENDPOINT_URL"],
                                      aws_access_key_id=s3["AWS_ACCESS_KEY_ID"],
                                      aws_secret_access_key=s3["AWS_SECRET_ACCESS_KEY"],
                                      region_name=s3.get("AWS_DEFAULT_REGION", "us-east-1"))
                bucket, key = item["path"][len("s3://"):].split("/", 1)
                src = Path(f"s3-{item['table']}.{fmt}")
                client.download_file(bucket, key, str(src))
            con.execute(f"CREATE OR REPLACE TABLE {ident(schema)}.{ident(item['table'])} AS "
                        f"SELECT * FROM {reader(src, fmt)}")

    if "mongodb" in cfg:
        mc = cfg["mongodb"]["config"]
        if "connection_string" in mc:  # a real server
            import pymongo

            client = pymongo.MongoClient(mc["connection_string"])
            db = client[mc["database"]]
            for table in mc["tables"]:
                rows = [{k: (str(v) if k == "_id" else v) for k, v in d.items()} for d in db[table].find()]
                load_rows(con, schema, table, rows)
        else:  # the collections as JSON-lines files of the task folder
            for table in mc["tables"]:
                path = task / "mongodb" / mc["database"] / f"{table}.jsonl"
                con.execute(f"CREATE OR REPLACE TABLE {ident(schema)}.{ident(table)} AS "
                            f"SELECT * FROM {reader(path, 'jsonl')}")

    con.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
