#!/usr/bin/python3
"""Throughput and memory of the Redis module against Redis's own SET / GET, on one server.

    bench/redis/bench_redis.py --module build/release/redis/cuckoo_redis.so [--requests N]

Starts one redis-server (no persistence) with the module loaded on a free loopback port and runs,
in one run against that server, with redis-benchmark:
  * SET / GET on random keys, CF.ADD / CF.EXISTS of random items in one filter: requests per
    second, and CF.* as a fraction of SET / GET (the server's request handling is the limit);
  * CF.MEXISTS with 100 random items per call: calls and items per second;
each the best of --rounds interleaved rounds (the machine may be shared);
then MEMORY USAGE per item of a filter holding N items beside a Redis SET of the same items.
Prints a Markdown report (and writes it to --out when given). The server is stopped by pid.
"""

import argparse
import csv
import io
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import redis


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(server, module, directory):
    port = free_port()
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", directory, "--logfile", os.path.join(directory, "redis.log"),
         "--loadmodule", os.path.abspath(module)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(host="127.0.0.1", port=port)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if client.ping():
                return process, port, client
        except redis.ConnectionError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("redis-server did not start")


def stop_server(process):
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# SET / GET draw keys from 10^6, so that most GETs find a key; filter items from 10^9, so that
# no item is drawn more than a few times (a filter holds at most 2b copies of one item: a fifth
# CF.ADD of one item to a b = 2 filter is refused, and redis-benchmark stops at an error).
KEYSPACE = {"SET": 1_000_000, "GET": 1_000_000}
ITEM_SPACE = 1_000_000_000


def requests_per_second(benchmark, port, requests, clients, pipeline, command):
    """redis-benchmark's requests per second for one command (each __rand_int__ is replaced by
    its own random number in 0..keyspace-1)."""
    keyspace = KEYSPACE.get(command[0], ITEM_SPACE)
    result = subprocess.run(
        [benchmark, "-h", "127.0.0.1", "-p", str(port), "-n", str(requests), "-c", str(clients),
         "-P", str(pipeline), "-r", str(keyspace), "--csv", *command],
        capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"redis-benchmark failed on {command[0]}: {result.stdout[-500:]}"
                           f"{result.stderr[-500:]}")
    rows = [row for row in csv.reader(io.StringIO(result.stdout)) if row and row[0] != "test"]
    return float(rows[-1][1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--module", required=True)
    parser.add_argument("--server", default="/usr/bin/redis-server")
    parser.add_argument("--benchmark", default="/usr/bin/redis-benchmark")
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--memory-items", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args()

    lines = []
    with tempfile.TemporaryDirectory() as directory:
        process, port, r = start_server(args.server, args.module, directory)
        try:
            version = r.info("server")["redis_version"]
            # Sized for every CF.ADD the run makes: a fixed-size table, no doubling mid-run.
            r.execute_command("CF.RESERVE", "bench:cf", 2 * args.rounds * args.requests)
            lines += [f"redis-server {version}, one server, {args.clients} clients; "
                      "SET / GET keys random in 0..10^6, "
                      "filter items random in 0..10^9.", ""]
            for pipeline in (1, 16):
                # Unpipelined requests are slow to send: a fifth as many. Each command runs
                # `rounds` times, interleaved with the others, and its best round counts: the
                # machine is shared, and a round slowed by something else measures that instead.
                requests = args.requests if pipeline > 1 else max(10000, args.requests // 5)
                rates = {}
                for _ in range(args.rounds):
                    for name, command in (
                            ("SET", ["SET", "bench:key:__rand_int__", "1"]),
                            ("GET", ["GET", "bench:key:__rand_int__"]),
                            ("CF.ADD", ["CF.ADD", "bench:cf", "item:__rand_int__"]),
                            ("CF.EXISTS", ["CF.EXISTS", "bench:cf", "item:__rand_int__"])):
                        rate = requests_per_second(args.benchmark, port, requests, args.clients,
                                                   pipeline, command)
                        rates[name] = max(rates.get(name, 0.0), rate)
                lines += [f"Pipeline depth {pipeline}, {requests:,} requests a round, best of "
                          f"{args.rounds} rounds:", "",
                          "| command | requests/s | vs Redis |", "| --- | ---: | ---: |",
                          f"| SET | {rates['SET']:,.0f} | |", f"| GET | {rates['GET']:,.0f} | |",
                          f"| CF.ADD | {rates['CF.ADD']:,.0f} | "
                          f"{rates['CF.ADD'] / rates['SET']:.2f}x SET |",
                          f"| CF.EXISTS | {rates['CF.EXISTS']:,.0f} | "
                          f"{rates['CF.EXISTS'] / rates['GET']:.2f}x GET |", ""]
            mexists_requests = max(1000, args.requests // 50)
            mexists = ["CF.MEXISTS", "bench:cf", *["item:__rand_int__"] * 100]
            calls = max(requests_per_second(args.benchmark, port, mexists_requests,
                                            args.clients, 1, mexists)
                        for _ in range(args.rounds))
            lines += [f"CF.MEXISTS, 100 items per call: {calls:,.0f} calls/s = "
                      f"{calls * 100:,.0f} items/s ({r.cf().info('bench:cf').insertedNum:,} "
                      "items in the filter).", ""]

            n = args.memory_items
            r.execute_command("CF.RESERVE", "mem:cf", n)
            r.execute_command("CF.RESERVE", "mem:cf-b4", n, "BUCKETSIZE", 4)
            r.execute_command("CF.RESERVE", "mem:cf-grown", 1024)
            pipe = r.pipeline(transaction=False)
            for start in range(0, n, 1000):
                batch = [f"member:{i}" for i in range(start, min(n, start + 1000))]
                pipe.execute_command("CF.INSERT", "mem:cf", "ITEMS", *batch)
                pipe.execute_command("CF.INSERT", "mem:cf-b4", "ITEMS", *batch)
                pipe.execute_command("CF.INSERT", "mem:cf-grown", "ITEMS", *batch)
                pipe.sadd("mem:set", *batch)
                if len(pipe) >= 400:
                    pipe.execute()
            pipe.execute()
            lines += [f"MEMORY USAGE for {n:,} items \"member:0\" ... (bytes per item):", "",
                      "| value | bytes | bytes/item |", "| --- | ---: | ---: |"]
            for key, what in (("mem:cf", "CF.RESERVE n (default ε = 0.1%, b = 2)"),
                              ("mem:cf-b4", "CF.RESERVE n BUCKETSIZE 4 (ε = 0.1%)"),
                              ("mem:cf-grown", "CF.ADD-created (1024), grown to n"),
                              ("mem:set", "Redis SET (SADD)")):
                used = r.memory_usage(key, samples=0)
                lines.append(f"| {what} | {used:,} | {used / n:.2f} |")
        finally:
            stop_server(process)
    report = "\n".join(lines) + "\n"
    sys.stdout.write(report)
    if args.out:
        with open(args.out, "w") as out:
            out.write(report)


if __name__ == "__main__":
    main()
