"""A three-primary Redis Cluster on loopback ports: filters spread over the nodes by redis-py's
cluster client, and a slot holding filters moved to another node by `redis-cli --cluster reshard`
(MIGRATE: DUMP and RESTORE through the module's RDB callbacks) without losing an item."""

import subprocess

import pytest
import redis
from redis.cluster import ClusterNode, RedisCluster

from conftest import CLI, wait_until

RESHARD_SLOTS = 50


def crc16(data):
    """The CRC16-CCITT (XMODEM) Redis Cluster hashes keys with."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_in_slot(slot, name):
    """A key `{tag}name` whose hash tag puts it in `slot`."""
    for i in range(1_000_000):
        tag = f"t{i}"
        if crc16(tag.encode()) % 16384 == slot:
            return f"{{{tag}}}{name}"
    raise AssertionError(f"no tag found for slot {slot}")


def cluster_ok(server):
    return b"cluster_state:ok" in server.cli("CLUSTER", "INFO")


def node_id(server):
    return server.cli("CLUSTER", "MYID").strip().decode()


def test_three_primaries_and_a_reshard_keep_every_item(start_server):
    nodes = [start_server(f"node{i}", cluster=True,
                          extra_args=["--cluster-enabled", "yes", "--cluster-config-file",
                                      "nodes.conf", "--cluster-node-timeout", "5000"])
             for i in range(3)]
    subprocess.run([CLI, "--cluster", "create", *[f"127.0.0.1:{n.port}" for n in nodes],
                    "--cluster-yes"], check=True, capture_output=True, timeout=120)
    for node in nodes:
        wait_until(lambda node=node: cluster_ok(node), 60, "cluster_state:ok")

    cluster = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", n.port) for n in nodes])
    try:
        cf = cluster.cf()
        # Filters all over the key space, hence on every node.
        keys = [f"filter:{i}" for i in range(30)]
        members = {key: [f"{key}/item{j}".encode() for j in range(300)] for key in keys}
        for key in keys:
            assert cf.create(key, 200)
            assert cf.insert(key, members[key]) == [1] * 300  # grows past 200
        owners = {cluster.get_node_from_key(key).port for key in keys}
        assert len(owners) == 3

        # Filters in the first slots of node 0's range: the ones a reshard of RESHARD_SLOTS
        # slots from node 0 moves (redis-cli takes a source's lowest slots first).
        source, target = nodes[0], nodes[1]
        first_slot = min(int(r.split("-")[0]) for r in _slot_ranges(source, node_id(source)))
        moved = [key_in_slot(first_slot + s, f"moving{s}") for s in range(0, RESHARD_SLOTS, 10)]
        for key in moved:
            cf.create(key, 100, expansion=1, bucket_size=4)
            members[key] = [f"{key}/item{j}".encode() for j in range(1000)]
            assert cf.insert(key, members[key]) == [1] * 1000
        digests = {key: source.client().execute_command("DEBUG", "DIGEST-VALUE", key)
                   for key in moved}

        subprocess.run([CLI, "--cluster", "reshard", f"127.0.0.1:{source.port}",
                        "--cluster-from", node_id(source), "--cluster-to", node_id(target),
                        "--cluster-slots", str(RESHARD_SLOTS), "--cluster-yes"],
                       check=True, capture_output=True, timeout=300)
        for node in nodes:
            wait_until(lambda node=node: cluster_ok(node), 60, "cluster_state:ok")
        target_client = target.client()
        for key in moved:
            with pytest.raises(redis.ResponseError, match="MOVED"):
                source.client().exists(key)  # the slot is no longer the source's
            assert target_client.exists(key) == 1
            assert target_client.execute_command("DEBUG", "DIGEST-VALUE", key) == digests[key]

        # The cluster client follows the MOVED slots; nothing was lost anywhere.
        for key, items in members.items():
            assert cf.mexists(key, *items) == [1] * len(items), key
        assert cf.add(moved[0], "after the move") == 1
        assert target_client.execute_command("CF.EXISTS", moved[0], "after the move") == 1
    finally:
        cluster.close()


def _slot_ranges(server, my_id):
    """The slot ranges ("a-b" or "a") the node with id `my_id` serves, from CLUSTER NODES."""
    for line in server.cli("CLUSTER", "NODES").decode().splitlines():
        fields = line.split()
        if fields and fields[0] == my_id:
            return [f if "-" in f else f"{f}-{f}" for f in fields[8:] if not f.startswith("[")]
    raise AssertionError("node not found in CLUSTER NODES")
