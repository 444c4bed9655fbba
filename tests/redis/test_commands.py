"""Every CF.* command, its replies and its error texts, on a real redis-server.

Driven with redis-py's RedisBloom client (`r.cf()`, unmodified) where it has the command, with the
raw protocol where the exact error text matters (redis-py strips the "ERR " prefix), and with
redis-cli.
"""

import random

import pytest
import redis

from conftest import wire_reply

INFO_FIELDS = ["Size", "Number of buckets", "Number of filters", "Number of items inserted",
               "Number of items deleted", "Bucket size", "Expansion rate", "Max iterations"]


def items(prefix, n):
    return [f"{prefix}:{i}".encode() for i in range(n)]


def info(r, key):
    reply = r.execute_command("CF.INFO", key)
    return dict(zip((name.decode() for name in reply[::2]), reply[1::2]))


def test_redis_py_client_round_trip(r):
    cf = r.cf()
    assert cf.create("cf", 1000)
    assert cf.add("cf", "alice") == 1
    assert cf.addnx("cf", "alice") == 0
    assert cf.addnx("cf", "bob") == 1
    assert cf.exists("cf", "alice") == 1
    assert cf.exists("cf", "carol") == 0
    assert cf.mexists("cf", "alice", "carol", "bob") == [1, 0, 1]
    assert cf.add("cf", "alice") == 1  # CF.ADD keeps duplicates
    assert cf.count("cf", "alice") == 2
    assert cf.delete("cf", "alice") == 1
    assert cf.count("cf", "alice") == 1
    assert cf.insert("cf", ["x", "y"]) == [1, 1]
    assert cf.insertnx("cf", ["x", "z"]) == [0, 1]
    parsed = cf.info("cf")
    assert parsed.insertedNum == 5 and parsed.deletedNum == 1
    assert parsed.bucketSize == 2 and parsed.maxIteration == 500
    assert parsed.filterNum == 1 and parsed.expansionRate == 2
    assert parsed.bucketNum > 0 and parsed.size > 0


def test_info_has_exactly_redisbloom_field_names(r):
    r.execute_command("CF.RESERVE", "cf", 100, "BUCKETSIZE", 4, "MAXITERATIONS", 30,
                      "EXPANSION", 0)
    reply = r.execute_command("CF.INFO", "cf")
    assert [name.decode() for name in reply[::2]] == INFO_FIELDS
    assert all(isinstance(value, int) for value in reply[1::2])
    fields = info(r, "cf")
    assert fields["Bucket size"] == 4 and fields["Max iterations"] == 30
    assert fields["Expansion rate"] == 0 and fields["Number of filters"] == 1


def test_redis_cli_drives_the_commands(server):
    assert server.cli("CF.RESERVE", "cf", 100).strip() == b"OK"
    assert server.cli("CF.ADD", "cf", "one").strip() == b"1"
    assert server.cli("CF.EXISTS", "cf", "one").strip() == b"1"
    assert server.cli("CF.MEXISTS", "cf", "one", "two").split() == [b"1", b"0"]
    assert server.cli("CF.DEL", "cf", "nothing-here").strip() == b"0"
    assert server.cli("CF.DEL", "missing", "one").strip() == b"Not found"


def test_add_and_insert_create_a_missing_key_with_capacity_1024(r):
    assert r.execute_command("CF.ADD", "a", "x") == 1
    assert r.execute_command("CF.ADDNX", "b", "x") == 1
    assert r.execute_command("CF.INSERT", "c", "ITEMS", "x") == [1]
    assert r.execute_command("CF.INSERTNX", "d", "ITEMS", "x", "x") == [1, 0]
    r.execute_command("CF.RESERVE", "reference", 1024)
    expected = info(r, "reference")["Number of buckets"]
    for key in "abcd":
        assert info(r, key)["Number of buckets"] == expected
    r.execute_command("CF.INSERT", "e", "CAPACITY", 100000, "ITEMS", "x")
    assert info(r, "e")["Number of buckets"] > 50 * expected


def test_missing_keys(r):
    assert r.execute_command("CF.EXISTS", "none", "x") == 0
    assert r.execute_command("CF.COUNT", "none", "x") == 0
    assert r.execute_command("CF.MEXISTS", "none", "x", "y") == [0, 0]
    port = r.connection_pool.connection_kwargs["port"]
    for command in (["CF.INFO", "none"], ["CF.SCANDUMP", "none", 0],
                    ["CF.INSERT", "none", "NOCREATE", "ITEMS", "x"],
                    ["CF.INSERTNX", "none", "NOCREATE", "ITEMS", "x"]):
        assert wire_reply(port, *command) == "-ERR not found"
    # RedisBloom's own texts for these two (src/rebloom.c).
    assert wire_reply(port, "CF.DEL", "none", "x") == "-Not found"
    assert wire_reply(port, "CF.COMPACT", "none") == "-Cuckoo filter was not found"
    assert r.exists("none") == 0


ERROR_CASES = [
    (["CF.RESERVE", "k", "abc"], "-Bad capacity"),
    (["CF.RESERVE", "k", "0"], "-Bad capacity"),
    (["CF.RESERVE", "k", "-5"], "-Bad capacity"),
    (["CF.RESERVE", "k", "3"], "-Capacity must be at least (BucketSize * 2)"),
    (["CF.RESERVE", "k", "10", "BUCKETSIZE", "8"], "-Capacity must be at least (BucketSize * 2)"),
    (["CF.RESERVE", "k", "100", "BUCKETSIZE", "x"], "-Couldn't parse BUCKETSIZE"),
    (["CF.RESERVE", "k", "100", "BUCKETSIZE", "0"],
     "-BUCKETSIZE parameter needs to be a positive integer"),
    (["CF.RESERVE", "k", "100", "BUCKETSIZE", "256"],
     "-BUCKETSIZE parameter needs to be a positive integer"),
    (["CF.RESERVE", "k", "100", "BUCKETSIZE", "3"], "-BUCKETSIZE must be 2, 4 or 8"),
    (["CF.RESERVE", "k", "100", "MAXITERATIONS", "x"], "-Couldn't parse MAXITERATIONS"),
    (["CF.RESERVE", "k", "100", "MAXITERATIONS", "0"],
     "-MAXITERATIONS parameter needs to be a positive integer"),
    (["CF.RESERVE", "k", "100", "MAXITERATIONS", "65536"],
     "-MAXITERATIONS parameter needs to be a positive integer"),
    (["CF.RESERVE", "k", "100", "EXPANSION", "x"], "-Couldn't parse EXPANSION"),
    (["CF.RESERVE", "k", "100", "EXPANSION", "-1"],
     "-EXPANSION parameter needs to be a non-negative integer"),
    (["CF.RESERVE", "k", "100", "EXPANSION", "32769"],
     "-EXPANSION parameter needs to be a non-negative integer"),
    (["CF.RESERVE", "k", "100", "ERROR_RATE", "x"], "-Couldn't parse ERROR_RATE"),
    (["CF.RESERVE", "k", "100", "ERROR_RATE", "0"], "-ERROR_RATE must be in (0, 1)"),
    (["CF.RESERVE", "k", "100", "ERROR_RATE", "1"], "-ERROR_RATE must be in (0, 1)"),
    (["CF.RESERVE", "k", "100", "FINGERPRINT_BITS", "x"], "-Couldn't parse FINGERPRINT_BITS"),
    (["CF.RESERVE", "k", "100", "FINGERPRINT_BITS", "1"],
     "-FINGERPRINT_BITS must be 2..32 (11..30 for a filter that expands)"),
    (["CF.RESERVE", "k", "100", "FINGERPRINT_BITS", "33"],
     "-FINGERPRINT_BITS must be 2..32 (11..30 for a filter that expands)"),
    (["CF.RESERVE", "k", "100", "FINGERPRINT_BITS", "8"],
     "-FINGERPRINT_BITS must be 2..32 (11..30 for a filter that expands)"),
    (["CF.RESERVE", "k", "100", "SIZE", "1"], "-Unknown argument received"),
    (["CF.RESERVE", "k", "1000000000000000"], "-Insufficient memory to create filter"),
    (["CF.RESERVE", "k", "9223372036854775807"], "-Insufficient memory to create filter"),
    (["CF.RESERVE", "k", "9223372036854775808"], "-Bad capacity"),
    (["CF.RESERVE", "k"], "-ERR wrong number of arguments for 'cf.reserve' command"),
    (["CF.RESERVE", "k", "100", "BUCKETSIZE"],
     "-ERR wrong number of arguments for 'cf.reserve' command"),
    (["CF.ADD", "k"], "-ERR wrong number of arguments for 'cf.add' command"),
    (["CF.ADDNX", "k", "a", "b"], "-ERR wrong number of arguments for 'cf.addnx' command"),
    (["CF.INSERT", "k", "ITEMS"], "-ERR wrong number of arguments for 'cf.insert' command"),
    (["CF.INSERT", "k", "NOCREATE", "ITEMS"],
     "-ERR wrong number of arguments for 'cf.insert' command"),
    (["CF.INSERT", "k", "NOCREATE", "x"], "-Unknown argument received"),
    (["CF.INSERT", "k", "NOCREATE", "CAPACITY"],
     "-ERR wrong number of arguments for 'cf.insert' command"),
    (["CF.INSERT", "k", "CAPACITY", "x", "ITEMS", "a"], "-Bad capacity"),
    (["CF.INSERT", "k", "FOO", "ITEMS", "a"], "-Unknown argument received"),
    (["CF.INSERT", "k", "CAPACITY", "1000000000000000", "ITEMS", "a"],
     "-Insufficient memory to create filter"),
    (["CF.INSERTNX", "k", "ERROR_RATE", "2", "ITEMS", "a"], "-ERROR_RATE must be in (0, 1)"),
    (["CF.EXISTS", "k"], "-ERR wrong number of arguments for 'cf.exists' command"),
    (["CF.MEXISTS", "k"], "-ERR wrong number of arguments for 'cf.mexists' command"),
    (["CF.COUNT", "k", "a", "b"], "-ERR wrong number of arguments for 'cf.count' command"),
    (["CF.DEL", "k"], "-ERR wrong number of arguments for 'cf.del' command"),
    (["CF.COMPACT"], "-ERR wrong number of arguments for 'cf.compact' command"),
    (["CF.INFO", "k", "x"], "-ERR wrong number of arguments for 'cf.info' command"),
    (["CF.SCANDUMP", "k"], "-ERR wrong number of arguments for 'cf.scandump' command"),
    (["CF.SCANDUMP", "k", "x"], "-Invalid position"),
    (["CF.SCANDUMP", "k", "-1"], "-Invalid position"),
    (["CF.LOADCHUNK", "k", "1"], "-ERR wrong number of arguments for 'cf.loadchunk' command"),
    (["CF.LOADCHUNK", "k", "x", "data"], "-Invalid position"),
    (["CF.LOADCHUNK", "new", "7", "data"], "-Invalid position"),
]


@pytest.mark.parametrize("command,expected", ERROR_CASES, ids=lambda c: " ".join(c)
                         if isinstance(c, list) else None)
def test_error_texts(server, command, expected):
    r = server.client()
    creates = command[0] in ("CF.RESERVE", "CF.INSERT", "CF.INSERTNX")
    if len(command) > 1 and command[1] == "k" and not creates:
        r.execute_command("CF.RESERVE", "k", 100)
    assert wire_reply(server.port, *command) == expected
    assert r.ping()
    if creates:
        assert r.exists("k") == 0  # a refused creation creates nothing


def test_an_error_rate_no_width_reaches(server):
    reply = wire_reply(server.port, "CF.RESERVE", "k", 1000, "ERROR_RATE", "1e-300")
    assert reply.startswith("-ERR cuckoo::Config: target_fpr") and "at most 32" in reply
    assert server.client().exists("k") == 0


def test_reserve_on_an_existing_key(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "k", 100)
    assert wire_reply(server.port, "CF.RESERVE", "k", 100) == "-ERR item exists"


def test_wrongtype_on_other_keys(server):
    r = server.client()
    r.set("s", "value")
    wrongtype = "-WRONGTYPE Operation against a key holding the wrong kind of value"
    for command in (["CF.RESERVE", "s", 100], ["CF.ADD", "s", "x"], ["CF.ADDNX", "s", "x"],
                    ["CF.INSERT", "s", "ITEMS", "x"], ["CF.INSERTNX", "s", "ITEMS", "x"],
                    ["CF.EXISTS", "s", "x"], ["CF.MEXISTS", "s", "x"], ["CF.COUNT", "s", "x"],
                    ["CF.DEL", "s", "x"], ["CF.COMPACT", "s"], ["CF.INFO", "s"],
                    ["CF.SCANDUMP", "s", 0], ["CF.LOADCHUNK", "s", 128, b"x" * 128]):
        assert wire_reply(server.port, *command) == wrongtype, command
    assert r.get("s") == b"value"
    r.execute_command("CF.ADD", "cf", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.get("cf")


def test_no_false_negatives_and_the_default_error_rate(r):
    members = items("member", 30000)
    pipe = r.pipeline(transaction=False)
    for start in range(0, len(members), 1000):
        pipe.execute_command("CF.INSERT", "cf", "ITEMS", *members[start:start + 1000])
    for reply in pipe.execute():
        assert reply == [1] * 1000
    # The default filter (capacity 1024) grew to hold them: one table, several doublings.
    fields = info(r, "cf")
    assert fields["Number of items inserted"] == len(members)
    assert fields["Number of filters"] > 1
    for start in range(0, len(members), 1000):
        assert r.execute_command("CF.MEXISTS", "cf", *members[start:start + 1000]) == [1] * 1000
    strangers = items("stranger", 30000)
    false_positives = 0
    for start in range(0, len(strangers), 1000):
        false_positives += sum(r.execute_command("CF.MEXISTS", "cf",
                                                 *strangers[start:start + 1000]))
    # The default target is 0.1% (RedisBloom's 8-bit fingerprints: about 1.5%); 30000 lookups at
    # 0.1% expect 30 false positives, and 75 is far beyond any plausible deviation.
    assert false_positives <= 75, false_positives


def test_error_rate_option_buys_accuracy(r):
    r.execute_command("CF.RESERVE", "loose", 20000, "ERROR_RATE", 0.05, "EXPANSION", 0)
    r.execute_command("CF.RESERVE", "tight", 20000, "ERROR_RATE", 0.0001, "EXPANSION", 0)
    r.execute_command("CF.RESERVE", "wide", 20000, "FINGERPRINT_BITS", 20, "EXPANSION", 0)
    members = items("m", 20000)
    for key in ("loose", "tight", "wide"):
        for start in range(0, len(members), 1000):
            batch = members[start:start + 1000]
            assert r.execute_command("CF.INSERT", key, "ITEMS", *batch) == [1] * 1000
    strangers = items("s", 40000)

    def false_positives(key):
        return sum(sum(r.execute_command("CF.MEXISTS", key, *strangers[i:i + 1000]))
                   for i in range(0, len(strangers), 1000))

    assert false_positives("tight") <= 20  # expects about 4
    assert false_positives("wide") <= 10
    assert false_positives("loose") >= 100  # a loose target really is looser (expects ~2000)
    assert info(r, "tight")["Size"] > info(r, "loose")["Size"]
    header = r.execute_command("CF.SCANDUMP", "wide", 0)[1]
    assert int.from_bytes(header[20:24], "little") == 20  # the fingerprint width in the file


def test_fixed_filter_fills_and_says_so(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 1000, "EXPANSION", 0)
    added = 0
    refused = None
    for item in items("x", 5000):
        try:
            r.execute_command("CF.ADD", "cf", item)
            added += 1
        except redis.ResponseError as error:
            assert str(error) == "Filter is full"
            refused = item
            break
    assert added >= 1000  # the capacity it was reserved for fits
    # A refused insert changes nothing, and inserts are deterministic: the same item is refused
    # again, with exactly this text.
    assert wire_reply(server.port, "CF.ADD", "cf", refused) == "-Filter is full"
    # CF.INSERT answers -1 per item that does not fit and goes on with the next.
    reply = r.execute_command("CF.INSERT", "cf", "ITEMS", *items("y", 20))
    assert -1 in reply and set(reply) <= {1, -1}
    assert info(r, "cf")["Number of items inserted"] == added + reply.count(1)
    assert r.execute_command("CF.MEXISTS", "cf", *items("x", added)) == [1] * added


def test_growable_filter_keeps_every_item(r):
    r.execute_command("CF.RESERVE", "cf", 100, "BUCKETSIZE", 4, "EXPANSION", 2)
    members = items("g", 5000)
    for start in range(0, len(members), 500):
        batch = members[start:start + 500]
        assert r.execute_command("CF.INSERT", "cf", "ITEMS", *batch) == [1] * 500
    assert info(r, "cf")["Number of filters"] >= 5  # 100 -> 5000 needs at least 5 doublings
    assert r.execute_command("CF.MEXISTS", "cf", *members) == [1] * len(members)


def test_repeated_items_do_not_blow_up_memory(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 1000)
    size = info(r, "cf")["Size"]
    refused = 0
    for _ in range(100):
        try:
            r.execute_command("CF.ADD", "cf", "same")
        except redis.ResponseError as error:
            assert str(error) == "Filter is full"
            refused += 1
    assert refused > 0  # a bounded number of copies, then refused (RedisBloom grew, #533)
    assert info(r, "cf")["Size"] == size
    assert r.execute_command("CF.COUNT", "cf", "same") == 100 - refused


def test_delete_and_count(r):
    r.execute_command("CF.RESERVE", "cf", 1000)
    for _ in range(3):
        r.execute_command("CF.ADD", "cf", "dup")
    assert r.execute_command("CF.COUNT", "cf", "dup") == 3
    assert r.execute_command("CF.DEL", "cf", "dup") == 1
    assert r.execute_command("CF.DEL", "cf", "dup") == 1
    assert r.execute_command("CF.COUNT", "cf", "dup") == 1
    assert r.execute_command("CF.DEL", "cf", "never added") == 0
    assert info(r, "cf")["Number of items deleted"] == 2
    assert info(r, "cf")["Number of items inserted"] == 1


def test_insertnx_within_one_batch(r):
    reply = r.execute_command("CF.INSERTNX", "cf", "ITEMS", "a", "b", "a", "c", "b")
    assert reply == [1, 1, 0, 1, 0]
    assert r.execute_command("CF.COUNT", "cf", "a") == 1


def test_compact_changes_nothing(r):
    r.execute_command("CF.INSERT", "cf", "ITEMS", *items("c", 3000))
    before = r.execute_command("CF.SCANDUMP", "cf", 128)
    assert r.execute_command("CF.COMPACT", "cf") == b"OK"
    assert r.execute_command("CF.SCANDUMP", "cf", 128) == before


def test_max_filter_bytes_module_argument(start_server):
    server = start_server(module_args=["MAX_FILTER_BYTES", 1 << 20])
    r = server.client()
    assert r.execute_command("CF.RESERVE", "small", 100000) == b"OK"
    assert wire_reply(server.port, "CF.RESERVE", "big", 2000000) == \
        "-Insufficient memory to create filter"
    assert r.exists("big") == 0


def test_max_filter_bytes_stops_a_growing_filter(start_server):
    server = start_server(module_args=["MAX_FILTER_BYTES", 1 << 16])
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 1000)
    added = 0
    for start in range(0, 100000, 1000):
        reply = r.execute_command("CF.INSERT", "cf", "ITEMS", *items(f"b{start}", 1000))
        added += reply.count(1)
        if -1 in reply:
            break
    assert 1000 < added < 100000  # it grew, then stopped at the bound instead of growing on
    assert info(r, "cf")["Size"] <= 1 << 16
    assert wire_reply(server.port, "CF.ADD", "cf", "one more") == "-Filter is full"
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"  # the bound holds after a reload too
    assert wire_reply(server.port, "CF.ADD", "cf", "one more") == "-Filter is full"
    assert info(r, "cf")["Size"] <= 1 << 16


def test_items_are_binary_safe(r):
    binary = [bytes([i, 0, 255 - i]) for i in range(256)]
    assert r.execute_command("CF.INSERT", "cf", "ITEMS", *binary) == [1] * 256
    assert r.execute_command("CF.MEXISTS", "cf", *binary) == [1] * 256
    assert r.execute_command("CF.ADD", "cf", b"") == 1
    assert r.execute_command("CF.EXISTS", "cf", b"") == 1


def test_random_operations_never_lose_an_item(r):
    rng = random.Random(16)
    present = {}
    r.execute_command("CF.RESERVE", "cf", 2000, "BUCKETSIZE", 4)
    for _ in range(3000):
        item = f"i{rng.randrange(1500)}".encode()
        if rng.random() < 0.7:
            assert r.execute_command("CF.ADD", "cf", item) == 1
            present[item] = present.get(item, 0) + 1
        elif present.get(item):
            assert r.execute_command("CF.DEL", "cf", item) == 1
            present[item] -= 1
    for item, copies in present.items():
        if copies:
            assert r.execute_command("CF.EXISTS", "cf", item) == 1
            assert r.execute_command("CF.COUNT", "cf", item) >= copies
