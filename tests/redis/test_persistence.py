"""Persistence, replication, dumps: the filter survives every way Redis moves or keeps a value.

RDB (DEBUG RELOAD), AOF (restart with appendonly on, after a rewrite), a replica (full sync, then
replicated writes: bit-for-bit equal, compared by DEBUG DIGEST-VALUE), DUMP/RESTORE (a damaged
payload refused), CF.SCANDUMP/CF.LOADCHUNK (the chunks are the library's file: `cuckoo info` and
Python read it), MEMORY USAGE, COPY, and random bytes and iterators to SCANDUMP/LOADCHUNK.
"""

import os
import subprocess

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import wait_until, wire_reply


def items(prefix, n):
    return [f"{prefix}:{i}".encode() for i in range(n)]


def insert_all(r, key, members, batch=1000):
    for start in range(0, len(members), batch):
        r.execute_command("CF.INSERT", key, "ITEMS", *members[start:start + batch])


def dump(r, key):
    """Every chunk of CF.SCANDUMP, as (iterator, data) pairs."""
    chunks = []
    iterator = 0
    while True:
        iterator, data = r.execute_command("CF.SCANDUMP", key, iterator)
        if iterator == 0:
            return chunks
        chunks.append((iterator, data))


def load(r, key, chunks):
    for iterator, data in chunks:
        assert r.execute_command("CF.LOADCHUNK", key, iterator, data) == b"OK"


def digest(r, key):
    return r.execute_command("DEBUG", "DIGEST-VALUE", key)[0]


def populate(r):
    """Filters of every kind, filled far enough that inserts kick entries around."""
    r.execute_command("CF.RESERVE", "fixed", 4000, "EXPANSION", 0)
    insert_all(r, "fixed", items("f", 3900))
    r.execute_command("CF.RESERVE", "growing", 500, "BUCKETSIZE", 4)
    insert_all(r, "growing", items("g", 6000))
    r.execute_command("CF.RESERVE", "wide", 1000, "BUCKETSIZE", 8, "FINGERPRINT_BITS", 24,
                      "EXPANSION", 0)
    insert_all(r, "wide", items("w", 900))
    for i in range(0, 300, 3):
        r.execute_command("CF.DEL", "fixed", f"f:{i}")
    return ["fixed", "growing", "wide"]


def state(r, keys):
    return {key: (dump(r, key), r.execute_command("CF.INFO", key), digest(r, key))
            for key in keys}


def test_debug_reload_keeps_every_filter_bit_for_bit(start_server):
    reloaded, untouched = start_server().client(), start_server().client()
    keys = populate(reloaded)
    populate(untouched)
    before = state(reloaded, keys)
    assert state(untouched, keys) == before
    assert reloaded.execute_command("DEBUG", "RELOAD") == b"OK"
    assert state(reloaded, keys) == before
    # The reloaded filters go on exactly as filters that never went through the RDB (whose
    # kick-walk PRNG did not restart): the same writes give the same bytes.
    for r in (reloaded, untouched):
        insert_all(r, "fixed", items("extra", 150))
        insert_all(r, "growing", items("extra", 3000))
    for key in keys:
        assert dump(reloaded, key) == dump(untouched, key), key


def test_restart_with_aof_keeps_the_filters(start_server):
    server = start_server(extra_args=["--appendonly", "yes"])
    r = server.client()
    keys = populate(r)
    pending = dump(r, "wide")
    r.execute_command("CF.LOADCHUNK", "pending", *pending[0])  # a load the rewrite catches halfway
    r.execute_command("BGREWRITEAOF")
    wait_until(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0
               and r.info("persistence")["aof_rewrite_scheduled"] == 0, 60, "the AOF rewrite")
    # Writes after the rewrite land in the AOF as commands.
    insert_all(r, "growing", items("after", 2000))
    r.execute_command("CF.ADD", "fixed", "after")
    keys_and_dumps = {key: dump(r, key) for key in keys}
    counts = {key: r.cf().info(key).insertedNum for key in keys}
    server.restart()
    r = server.client()
    for key in keys:
        assert dump(r, key) == keys_and_dumps[key], key
        assert r.cf().info(key).insertedNum == counts[key]
    assert r.execute_command("CF.MEXISTS", "growing", *items("after", 2000)) == [1] * 2000
    load(r, "pending", pending[1:])
    assert dump(r, "pending") == pending


def test_replica_is_bit_for_bit_the_primary(start_server):
    primary = start_server("primary")
    p = primary.client()
    keys = populate(p)  # before the replica exists: it gets these through a full sync (RDB)
    replica = start_server("replica", extra_args=["--replicaof", "127.0.0.1", str(primary.port)])
    rr = replica.client()
    wait_until(lambda: rr.info("replication").get("master_link_status") == "up", 60,
               "the replica's sync")
    # Writes after the sync are replicated as commands; they kick entries around in filters the
    # replica loaded from the snapshot, whose kick-walk PRNG restarted there.
    insert_all(p, "fixed", items("late", 300))
    insert_all(p, "growing", items("late", 5000))
    p.execute_command("CF.INSERTNX", "wide", "ITEMS", *items("w", 950))
    for i in range(1, 200, 7):
        p.execute_command("CF.DEL", "growing", f"g:{i}")
    p.execute_command("CF.ADD", "created-by-add", "x")
    load(p, "loaded", dump(p, "growing"))
    transaction = p.pipeline(transaction=True)  # MULTI / EXEC
    for item in items("multi", 50):
        transaction.execute_command("CF.ADD", "fixed", item)
    transaction.execute()
    assert p.eval("return redis.call('CF.INSERT', KEYS[1], 'ITEMS', ARGV[1], ARGV[2])", 1,
                  "scripted", "a", "b") == [1, 1]
    keys += ["created-by-add", "loaded", "scripted"]
    assert p.execute_command("WAIT", 1, 20000) == 1
    for key in keys:
        assert digest(rr, key) == digest(p, key), key
    assert rr.execute_command("DEBUG", "DIGEST") == p.execute_command("DEBUG", "DIGEST")
    assert dump(rr, "growing") == dump(p, "growing")
    # A replica is read-only: its clients get READONLY, not a diverging filter.
    with pytest.raises(redis.ReadOnlyError):
        rr.execute_command("CF.ADD", "fixed", "on the replica")


def test_memory_usage_reports_the_table(r):
    r.execute_command("CF.RESERVE", "small", 1000)
    r.execute_command("CF.RESERVE", "large", 1000000)
    small = r.memory_usage("small")
    large = r.memory_usage("large")
    assert small >= r.cf().info("small").size
    assert large >= r.cf().info("large").size
    assert large < r.cf().info("large").size * 1.1 + 4096
    assert large > 500 * small


def test_copy_is_independent(r):
    insert_all(r, "cf", items("a", 100))
    assert r.execute_command("COPY", "cf", "copy") == 1
    r.execute_command("CF.ADD", "copy", "only in the copy")
    assert r.execute_command("CF.EXISTS", "copy", "only in the copy") == 1
    assert r.execute_command("CF.EXISTS", "cf", "only in the copy") == 0


def test_damaged_restore_payload_is_refused(server):
    r = server.client()
    insert_all(r, "cf", items("r", 5000))
    payload = r.dump("cf")
    middle = len(payload) // 2
    damaged = payload[:middle] + bytes([payload[middle] ^ 0x40]) + payload[middle + 1:]
    # Redis's own CRC catches it first...
    with pytest.raises(redis.ResponseError, match="checksum"):
        r.restore("copy", 0, damaged)
    # ...and with that check off, the library's checksum refuses it; the server stays up.
    r.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", 1)
    assert wire_reply(server.port, "RESTORE", "copy", 0, damaged) == "-ERR Bad data format"
    truncated = payload[:middle] + payload[-10:]
    assert wire_reply(server.port, "RESTORE", "copy", 0, truncated).startswith("-")
    assert r.ping() and r.exists("copy") == 0
    assert r.restore("copy", 0, payload) == b"OK"
    assert digest(r, "copy") == digest(r, "cf")


def test_scandump_chunks_are_the_library_file(tmp_path, r):
    members = items("d", 3000)
    r.execute_command("CF.RESERVE", "cf", 2000, "BUCKETSIZE", 4)
    insert_all(r, "cf", members)  # grows: a version-2 (growable) file
    chunks = dump(r, "cf")
    assert len(chunks[0][1]) == 128 and chunks[0][1].startswith(b"\x89CKOO\r\n\x1a")
    file_bytes = b"".join(data for _, data in chunks)
    assert chunks[-1][0] == len(file_bytes)
    path = tmp_path / "dumped.cf"
    path.write_bytes(file_bytes)
    cli = os.environ.get("CUCKOO_CLI")
    if cli:
        result = subprocess.run([cli, "info", str(path)], capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0, result.stderr
        assert "3000" in result.stdout
    cuckoo = pytest.importorskip("cuckoo")
    loaded = cuckoo.CuckooFilter.from_bytes(file_bytes)
    assert len(loaded) == 3000
    assert all(member in loaded for member in members)
    # And a file the library wrote loads into Redis the same way.
    theirs = cuckoo.CuckooFilter.from_bytes(file_bytes).to_bytes()
    first = theirs[:128]
    assert r.execute_command("CF.LOADCHUNK", "from-python", 128, first) == b"OK"
    assert r.execute_command("CF.LOADCHUNK", "from-python", len(theirs), theirs[128:]) == b"OK"
    assert r.execute_command("CF.MEXISTS", "from-python", *members) == [1] * 3000


def test_loadchunk_round_trip_and_a_partial_load_survives_a_reload(r):
    insert_all(r, "source", items("s", 20000))
    chunks = dump(r, "source")
    load(r, "target", chunks)
    assert dump(r, "target") == chunks
    # A load interrupted after its header: the key is there but not yet usable.
    r.execute_command("CF.LOADCHUNK", "partial", *chunks[0])
    assert wire_reply(r.connection_pool.connection_kwargs["port"], "CF.EXISTS", "partial",
                      "s:1").startswith("-ERR the filter is still being loaded")
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    load(r, "partial", chunks[1:])
    assert dump(r, "partial") == chunks
    # Chunks out of order or onto a complete filter are refused and change nothing.
    port = r.connection_pool.connection_kwargs["port"]
    assert wire_reply(port, "CF.LOADCHUNK", "partial", *chunks[0]) == "-ERR item exists"
    r.execute_command("CF.LOADCHUNK", "again", *chunks[0])
    if len(chunks) > 2:
        assert wire_reply(port, "CF.LOADCHUNK", "again", *chunks[2]) == "-Invalid position"


def test_a_damaged_dump_is_refused_whole(r):
    insert_all(r, "source", items("s", 500))
    chunks = dump(r, "source")
    header, (end, table) = chunks[0], chunks[-1]
    damaged = table[:10] + bytes([table[10] ^ 1]) + table[11:]
    r.execute_command("CF.LOADCHUNK", "copy", *header)
    with pytest.raises(redis.ResponseError, match="checksum"):
        r.execute_command("CF.LOADCHUNK", "copy", end, damaged)
    assert r.exists("copy") == 0  # nothing half-built is left behind


@settings(max_examples=150, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_iterators_and_bytes_get_ok_or_an_error(server, data):
    r = server.client()
    if not r.exists("source"):
        insert_all(r, "source", items("s", 300))
    file_bytes = b"".join(chunk for _, chunk in dump(r, "source"))
    iterator = data.draw(st.one_of(st.integers(-2**63, 2**63 - 1), st.integers(-5, 2000)))
    reply = wire_reply(server.port, "CF.SCANDUMP", "source", iterator)
    assert reply.startswith("*2") or reply == "-Invalid position"
    # A chunk: random bytes, or the real file with a few bytes changed, cut anywhere.
    raw = data.draw(st.one_of(
        st.binary(max_size=400),
        st.builds(lambda at, value, cut:
                  (file_bytes[:at] + bytes([value]) + file_bytes[at + 1:])[:cut],
                  st.integers(0, len(file_bytes) - 1), st.integers(0, 255),
                  st.integers(0, len(file_bytes)))))
    position = data.draw(st.one_of(st.just(len(raw)), st.integers(-10, 10**12)))
    key = data.draw(st.sampled_from(["fresh", "source", "half"]))
    if key == "half" and not r.exists("half"):
        r.execute_command("CF.LOADCHUNK", "half", 128, file_bytes[:128])
    reply = wire_reply(server.port, "CF.LOADCHUNK", key, position, raw)
    assert reply == "+OK" or reply.startswith("-"), reply
    assert r.ping()
    if r.exists("fresh"):
        r.delete("fresh")


def test_a_filter_larger_than_one_chunk_dumps_loads_and_rewrites(start_server):
    server = start_server(extra_args=["--appendonly", "yes"])
    r = server.client()
    r.execute_command("CF.RESERVE", "big", 12_000_000, "EXPANSION", 0)  # a table over 16 MiB
    insert_all(r, "big", items("b", 20000))
    chunks = dump(r, "big")
    assert len(chunks) >= 3  # the header, then table chunks of at most 16 MiB
    assert all(len(data) <= 16 << 20 for _, data in chunks)
    load(r, "copy", chunks)
    assert digest(r, "copy") == digest(r, "big")
    r.execute_command("BGREWRITEAOF")
    wait_until(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0
               and r.info("persistence")["aof_rewrite_scheduled"] == 0, 120, "the AOF rewrite")
    server.restart()
    r = server.client()
    assert dump(r, "big") == chunks and dump(r, "copy") == chunks


def test_a_scandump_walk_serializes_once_and_sees_writes(r):
    insert_all(r, "cf", items("w", 1000))
    idle = r.memory_usage("cf", samples=0)
    iterator, _header = r.execute_command("CF.SCANDUMP", "cf", 0)
    assert r.memory_usage("cf", samples=0) > idle  # the walk holds the serialized file...
    r.execute_command("CF.ADD", "cf", "added mid-walk")  # ...which a write drops
    assert r.memory_usage("cf", samples=0) == idle
    end, rest = r.execute_command("CF.SCANDUMP", "cf", iterator)
    assert rest == dump(r, "cf")[1][1]  # the chunk after the write shows the write
    assert r.execute_command("CF.SCANDUMP", "cf", end) == [0, None]
    assert r.memory_usage("cf", samples=0) == idle  # a finished walk lets the file go
