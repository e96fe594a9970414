"""When each request reached the loopback interface: kernel timestamps of TCP segments.

A packet socket on ``lo`` (Linux, needs CAP_NET_RAW) with a classic BPF filter that keeps
IPv4 TCP segments sent to one port, and only the headers of each. The kernel stamps every
segment as the sending process writes it (``SO_TIMESTAMPNS``, CLOCK_REALTIME, the clock of
``time.time_ns()`` and of the server's ``received_at``). Segments queue in the socket until
:meth:`WireTap.take` reads them, so reading late loses nothing but queue space.
"""

from __future__ import annotations

import contextlib
import ctypes
import socket
import struct
from dataclasses import dataclass

SO_ATTACH_FILTER = 26
SO_TIMESTAMPNS = 35
ETH_P_ALL = 3
PACKET_OUTGOING = 4
ETHERNET = 14  # lo frames carry a zeroed Ethernet header on packet sockets
SNAPLEN = 128  # IPv4 and TCP headers with options


@dataclass(frozen=True)
class Segment:
    """A TCP segment seen on ``lo``: when it was sent, from which port, how much data."""

    wall_ns: int
    source_port: int
    payload: int


def _filter(port: int) -> list[tuple[int, int, int, int]]:
    """``tcp dst port PORT`` for IPv4 (as ``tcpdump -dd`` would compile it), keeping
    SNAPLEN bytes: (code, jump if true, jump if false, k)."""
    return [
        (0x28, 0, 0, 12),  # ldh [12]: EtherType
        (0x15, 0, 8, 0x0800),  # IPv4, else drop
        (0x30, 0, 0, 23),  # ldb [23]: IP protocol
        (0x15, 0, 6, 6),  # TCP, else drop
        (0x28, 0, 0, 20),  # ldh [20]: fragment offset
        (0x45, 4, 0, 0x1FFF),  # a later fragment: drop
        (0xB1, 0, 0, ETHERNET),  # ldxb 4*([14]&0xf): IP header length
        (0x48, 0, 0, ETHERNET + 2),  # ldh [x+16]: TCP destination port
        (0x15, 0, 1, port),
        (0x06, 0, 0, SNAPLEN),  # keep
        (0x06, 0, 0, 0),  # drop
    ]


class WireTap:
    """TCP segments sent to ``port`` on the loopback interface."""

    def __init__(self, port: int, buffer_bytes: int = 8 << 20) -> None:
        # Bound to no protocol until the filter is on, so nothing unfiltered queues up.
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        try:
            program = _filter(port)
            self._code = ctypes.create_string_buffer(
                b"".join(struct.pack("HBBI", *op) for op in program)
            )
            fprog = struct.pack("HL", len(program), ctypes.addressof(self._code))
            self.sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
            self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buffer_bytes)
            self.sock.bind(("lo", ETH_P_ALL))
            self.sock.setblocking(False)
        except BaseException:
            self.sock.close()
            raise

    def take(self) -> list[Segment]:
        """Every segment queued since the last call, in the order sent."""
        segments: list[Segment] = []
        while True:
            try:
                data, ancillary, _, address = self.sock.recvmsg(SNAPLEN, 64)
            except BlockingIOError:
                return segments
            # Each segment on lo is seen leaving and arriving: keep the sending.
            if address[2] != PACKET_OUTGOING:
                continue
            wall = next(
                (
                    sec * 1_000_000_000 + nsec
                    for level, kind, value in ancillary
                    if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS
                    for sec, nsec in [struct.unpack("qq", value[:16])]
                ),
                None,
            )
            if wall is None:
                continue
            ip_header = (data[ETHERNET] & 0x0F) * 4
            (total,) = struct.unpack_from("!H", data, ETHERNET + 2)
            tcp = ETHERNET + ip_header
            (source,) = struct.unpack_from("!H", data, tcp)
            tcp_header = (data[tcp + 12] >> 4) * 4
            segments.append(Segment(wall, source, total - ip_header - tcp_header))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def local_ports(remote_port: int) -> list[int]:
    """Local ports of this process's TCP connections to 127.0.0.1:``remote_port`` (Linux:
    the socket inodes of /proc/self/fd looked up in /proc/net/tcp and tcp6)."""
    import os

    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    ports = []
    # gRPC may use an IPv6 socket with the IPv4-mapped address: look in both tables.
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(name) as table:
            next(table)
            for line in table:
                fields = line.split()
                local, remote, inode = fields[1], fields[2], fields[9]
                address, port = remote.split(":")
                if (
                    inode in inodes
                    and address.endswith("0100007F")
                    and int(port, 16) == remote_port
                ):
                    ports.append(int(local.split(":")[1], 16))
    return sorted(ports)
