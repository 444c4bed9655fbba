#!/usr/bin/python3
"""Throughput and memory of the Redis module against Redis's own SET / GET, on one server.

    bench/redis/bench_redis.py --module build/release/redis/cuckoo_redis.so [--requests N]

Starts one redis-server (no persistence) with the module loaded on a free loopback port and runs,
in one run against that server, with redis-benchmark:
  * SET / GET on random keys, CF.ADD / CF.EXISTS of random items in one filter: requests per
    second, and CF.* as a fraction of SET / GET (the server's request handling is the limit);
  * CF.MEXISTS with 100 random items per call: calls and items per second;
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


def requests_per_second(benchmark, port, requests, clients, pipeline, command):
    """redis-benchmark's requests per second for one command (each __rand_int__ is replaced by
    its own random number in 0..keyspace-1)."""
    result = subprocess.run(
        [benchmark, "-h", "127.0.0.1", "-p", str(port), "-n", str(requests), "-c", str(clients),
         "-P", str(pipeline), "-r", "10000000", "--csv", *command],
        capture_output=True, text=True, check=True, timeout=600)
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
    parser.add_argument("--out")
    args = parser.parse_args()

    lines = []
    with tempfile.TemporaryDirectory() as directory:
        process, port, r = start_server(args.server, args.module, directory)
        try:
            version = r.info("server")["redis_version"]
            r.execute_command("CF.RESERVE", "bench:cf", args.requests)
            lines += [f"redis-server {version}, one server, {args.clients} clients, "
                      f"{args.requests} requests per test, random keys / items in 0..10^7.", ""]
            for pipeline in (1, 16):
                rates = {}
                for name, command in (
                        ("SET", ["SET", "bench:key:__rand_int__", "1"]),
                        ("GET", ["GET", "bench:key:__rand_int__"]),
                        ("CF.ADD", ["CF.ADD", "bench:cf", "item:__rand_int__"]),
                        ("CF.EXISTS", ["CF.EXISTS", "bench:cf", "item:__rand_int__"])):
                    rates[name] = requests_per_second(args.benchmark, port, args.requests,
                                                      args.clients, pipeline, command)
                lines += [f"Pipeline depth {pipeline}:", "",
                          "| command | requests/s | vs Redis |", "| --- | ---: | ---: |",
                          f"| SET | {rates['SET']:,.0f} | |", f"| GET | {rates['GET']:,.0f} | |",
                          f"| CF.ADD | {rates['CF.ADD']:,.0f} | "
                          f"{rates['CF.ADD'] / rates['SET']:.2f}x SET |",
                          f"| CF.EXISTS | {rates['CF.EXISTS']:,.0f} | "
                          f"{rates['CF.EXISTS'] / rates['GET']:.2f}x GET |", ""]
            mexists_requests = max(1000, args.requests // 50)
            calls = requests_per_second(args.benchmark, port, mexists_requests, args.clients, 1,
                                        ["CF.MEXISTS", "bench:cf",
                                         *["item:__rand_int__"] * 100])
            lines += [f"CF.MEXISTS, 100 items per call: {calls:,.0f} calls/s = "
                      f"{calls * 100:,.0f} items/s ({r.cf().info('bench:cf').insertedNum:,} "
                      "items in the filter).", ""]

            n = args.memory_items
            r.execute_command("CF.RESERVE", "mem:cf", n)
            r.execute_command("CF.RESERVE", "mem:cf-grown", 1024)
            pipe = r.pipeline(transaction=False)
            for start in range(0, n, 1000):
                batch = [f"member:{i}" for i in range(start, min(n, start + 1000))]
                pipe.execute_command("CF.INSERT", "mem:cf", "ITEMS", *batch)
                pipe.execute_command("CF.INSERT", "mem:cf-grown", "ITEMS", *batch)
                pipe.sadd("mem:set", *batch)
                if len(pipe) >= 300:
                    pipe.execute()
            pipe.execute()
            lines += [f"MEMORY USAGE for {n:,} items \"member:0\" ... (bytes per item):", "",
                      "| value | bytes | bytes/item |", "| --- | ---: | ---: |"]
            for key, what in (("mem:cf", "CF.RESERVE n (default ε = 0.1%, b = 2)"),
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
