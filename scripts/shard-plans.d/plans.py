"""Reads each prepared statement's generic plan on the distributed shape (distribute.sql) and says
which distributed tables it reaches on one shard and which on all of them.

    python3 plans.py PSQL_URL STATEMENTS.jsonl

A generic plan with every parameter NULL shows what the parameters can prune: a table whose
distribution column a parameter binds by equality is pruned when the plan starts ("Subplans
Removed"), so no shard of it is scanned; a table read by anything else is scanned on all its
shards. Writes route each row to its shard, so only scans are counted.

PostgreSQL prunes a partition joined on the key only as the join runs, so its plan lists every
partition where a distributed engine plans a co-located join on one shard: a scan whose condition
equates the key with another table's key is counted as co-located, not as every shard. A key
bound to a list (`= ANY($n)`) reaches the shards of the listed keys."""
import json
import re
import subprocess
import sys

TABLES = {"users": "local_id", "password_credentials": "local_id", "federated_identities": "local_id",
          "sessions": "local_id", "mfa_factors": "local_id", "action_codes": "code_hash",
          "phone_sessions": "session_hash", "mfa_pending": "pending_hash"}
SHARDS = 8


def plan(url, sql):
    count = max((int(n) for n in re.findall(r"\$(\d+)", sql)), default=0)
    arguments = f"({', '.join(['NULL'] * count)})" if count else ""
    script = (f"SET plan_cache_mode = force_generic_plan; PREPARE s AS {sql}; "
              f"EXPLAIN (COSTS OFF) EXECUTE s{arguments};")
    done = subprocess.run(["psql", url, "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", script], capture_output=True, text=True)
    if done.returncode != 0:
        return None, done.stderr.strip().splitlines()[0] if done.stderr.strip() else "failed"
    return done.stdout, None


def scans(text, table):
    """(shard, kind) for each scan of one of `table`'s partitions: "joined" when its condition
    equates the key with another table's, "listed" when it binds the key to a list, else "free"."""
    key = TABLES[table]
    lines = text.splitlines()
    found = []
    for index, line in enumerate(lines):
        match = re.search(rf"Scan(?: using \S+)? on {table}_shard(\d+)(?: (\w+))?", line)
        if not match:
            continue
        depth = len(line) - len(line.lstrip())
        details = []
        for detail in lines[index + 1:]:
            if len(detail) - len(detail.lstrip()) <= depth or detail.lstrip().startswith("->"):
                break
            details.append(detail)
        details = " ".join(details)
        alias = match.group(2) or table
        joined = [a for a in re.findall(rf"\b{key} = \(?(\w+)\.{key}\b", details) if a != alias]
        if joined:
            found.append((match.group(1), "joined"))
        elif re.search(rf"\b{key} = ANY", details):
            found.append((match.group(1), "listed"))
        else:
            found.append((match.group(1), "free"))
    return found


def main():
    url, path = sys.argv[1:3]
    rows = []
    fanouts = 0
    for line in open(path):
        statement = json.loads(line)
        name, sql = statement["name"], statement["sql"]
        referenced = [t for t in TABLES if re.search(rf"\b{t}\b", sql)]
        text, error = plan(url, sql)
        if error:
            rows.append((name, ", ".join(referenced), f"does not prepare: {error}"))
            fanouts += 1
            continue
        verdicts = []
        for table in referenced:
            kinds = scans(text, table)
            shards = {shard for shard, _ in kinds}
            if not shards or len(shards) == 1:
                verdicts.append(f"{table}: one")
            elif all(kind == "joined" for _, kind in kinds):
                verdicts.append(f"{table}: one (co-located join)")
            elif all(kind == "listed" for _, kind in kinds):
                verdicts.append(f"{table}: the listed keys' shards")
            else:
                verdicts.append(f"{table}: all {len(shards)} shards")
        if any("all" in v for v in verdicts):
            fanouts += 1
        rows.append((name, ", ".join(referenced), "; ".join(verdicts)))
    print("| statement | tables | shards reached |")
    print("| --- | --- | --- |")
    for name, tables, verdict in rows:
        print(f"| `{name}` | {tables} | {verdict} |")
    print(f"\n{len(rows)} statements; {len(rows) - fanouts} reach one shard of each table they read, "
          f"{fanouts} reach every shard of some table or do not prepare.")


main()
