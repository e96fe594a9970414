"""The Merkle tree of the transparency log against RFC 9162 (and RFC 6962, whose tree
it keeps): known vectors, then properties over any tree (Hypothesis)."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from domain.kernel import merkle

#: The eight leaves of the test data published with RFC 6962's reference implementation
#: (certificate-transparency, merkle_tree_test), and the root of each prefix.
LEAVES = [
    bytes.fromhex(h)
    for h in [
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    ]
]
ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
HASHES = [merkle.leaf_hash(leaf) for leaf in LEAVES]


def hexes(proof: list[bytes]) -> list[str]:
    return [p.hex() for p in proof]


def test_the_empty_tree_hashes_to_the_hash_of_nothing() -> None:
    assert merkle.root([]) == hashlib.sha256(b"").digest()
    assert merkle.Frontier().root() == merkle.EMPTY_ROOT


def test_leaf_and_node_hashes_carry_their_prefixes() -> None:
    assert merkle.leaf_hash(b"a") == hashlib.sha256(b"\x00a").digest()
    assert merkle.node_hash(b"l", b"r") == hashlib.sha256(b"\x01lr").digest()


def test_the_roots_of_the_reference_vectors() -> None:
    for size, expected in enumerate(ROOTS, start=1):
        assert merkle.root(HASHES[:size]).hex() == expected
        frontier = merkle.Frontier()
        for h in HASHES[:size]:
            frontier.append(h)
        assert frontier.size == size
        assert frontier.root().hex() == expected


def test_the_reference_inclusion_proofs() -> None:
    assert hexes(merkle.inclusion_proof(0, HASHES)) == [
        "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    ]
    # Leaf 5 of 8, by the definition (RFC 9162 2.1.3.1): its sibling leaf 4, the subtree
    # of leaves 6 and 7, then the subtree of leaves 0 to 3.
    assert merkle.inclusion_proof(5, HASHES) == [
        HASHES[4],
        merkle.node_hash(HASHES[6], HASHES[7]),
        bytes.fromhex(ROOTS[3]),
    ]
    assert hexes(merkle.inclusion_proof(5, HASHES)) == [
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    ]
    assert merkle.inclusion_proof(0, HASHES[:1]) == []


def test_the_reference_consistency_proofs() -> None:
    assert hexes(merkle.consistency_proof(1, HASHES)) == hexes(merkle.inclusion_proof(0, HASHES))
    assert hexes(merkle.consistency_proof(6, HASHES)) == [
        "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    ]
    assert hexes(merkle.consistency_proof(2, HASHES[:5])) == [
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
    ]
    for old in range(9):
        for new in range(old, 9):
            assert merkle.verify_consistency(
                old,
                new,
                merkle.root(HASHES[:old]),
                merkle.root(HASHES[:new]),
                merkle.consistency_proof(old, HASHES[:new]),
            ), (old, new)


def test_degenerate_consistency_claims_fail() -> None:
    four, eight = merkle.root(HASHES[:4]), merkle.root(HASHES)
    # A tree is consistent with itself only, with an empty proof.
    assert merkle.verify_consistency(8, 8, eight, eight, [])
    assert not merkle.verify_consistency(8, 8, four, eight, [])
    assert not merkle.verify_consistency(8, 8, eight, eight, [eight])
    # A smaller tree never follows a larger one; an empty proof proves no growth.
    assert not merkle.verify_consistency(8, 4, eight, four, [])
    assert not merkle.verify_consistency(4, 8, four, eight, [])
    # The empty tree is a prefix of any tree, but only with its own root.
    assert merkle.verify_consistency(0, 8, merkle.EMPTY_ROOT, eight, [])
    assert not merkle.verify_consistency(0, 8, four, eight, [])


#: Distinct leaves: a leaf that occurs twice is, rightly, proven at either place.
sizes_and_leaves = st.lists(st.binary(max_size=8), min_size=1, max_size=70, unique=True)


@given(sizes_and_leaves, st.data())
def test_every_inclusion_proof_verifies_and_an_altered_leaf_fails(
    leaves: list[bytes], data: st.DataObject
) -> None:
    hashes = [merkle.leaf_hash(leaf) for leaf in leaves]
    root = merkle.root(hashes)
    index = data.draw(st.integers(0, len(leaves) - 1))
    proof = merkle.inclusion_proof(index, hashes)
    assert merkle.verify_inclusion(index, len(leaves), hashes[index], proof, root)
    altered = merkle.leaf_hash(leaves[index] + b"!")
    assert not merkle.verify_inclusion(index, len(leaves), altered, proof, root)
    # The same proof does not place the leaf anywhere else in a tree of two or more.
    other = data.draw(st.integers(0, len(leaves) - 1))
    if other != index:
        assert not merkle.verify_inclusion(other, len(leaves), hashes[index], proof, root)
    assert not merkle.verify_inclusion(index, len(leaves), hashes[index], proof, altered)


@given(sizes_and_leaves, st.data())
def test_every_consistency_proof_verifies_and_a_rewritten_prefix_fails(
    leaves: list[bytes], data: st.DataObject
) -> None:
    hashes = [merkle.leaf_hash(leaf) for leaf in leaves]
    new = len(hashes)
    old = data.draw(st.integers(0, new))
    old_root, new_root = merkle.root(hashes[:old]), merkle.root(hashes)
    proof = merkle.consistency_proof(old, hashes)
    assert merkle.verify_consistency(old, new, old_root, new_root, proof)
    if old > 0:
        # Any leaf of the old tree changed: the new tree no longer extends it.
        changed = data.draw(st.integers(0, old - 1))
        rewritten = list(hashes)
        rewritten[changed] = merkle.leaf_hash(leaves[changed] + b"!")
        forged_root = merkle.root(rewritten)
        assert not merkle.verify_consistency(
            old, new, old_root, forged_root, merkle.consistency_proof(old, rewritten)
        )
        assert not merkle.verify_consistency(
            old, new, merkle.root(rewritten[:old]), new_root, proof
        )


@given(st.lists(st.binary(max_size=4), max_size=70))
def test_the_frontier_gives_the_root_at_every_size(leaves: list[bytes]) -> None:
    frontier = merkle.Frontier()
    hashes = []
    for leaf in leaves:
        hashes.append(merkle.leaf_hash(leaf))
        frontier.append(hashes[-1])
        assert frontier.root() == merkle.root(hashes)
