"""A ``perf script`` handler for bench/read_order.py, run by perf's own Python.

``perf script -i DATA -s bench/perf_sockets.py`` with ``READ_ORDER_CSV`` set writes one
line per traced event to that file: ``kind,time_ns,cpu,tid,socket,protocol,bytes``. Kind ``R`` is
``sock:sk_data_ready`` (the kernel made a socket readable: data arrived), ``V`` is
``sock:sock_recv_length`` (a process read from a socket; ``bytes`` is what it read, or a
negative errno). ``socket`` is the kernel's address of the socket, which names it for
the run; ``protocol`` is the IP protocol (6 for TCP; 0 for a socket that is not IP).
perf calls the functions below by the events' names, with their fields.
"""

from __future__ import annotations

import os
from typing import Any

_out = open(os.environ["READ_ORDER_CSV"], "w")  # noqa: SIM115  # closed in trace_end


def trace_begin() -> None:
    pass


def trace_end() -> None:
    _out.close()


def sock__sk_data_ready(
    event_name: str,
    context: Any,
    common_cpu: int,
    common_secs: int,
    common_nsecs: int,
    common_pid: int,
    common_comm: str,
    common_callchain: Any,
    skaddr: int,
    family: int,
    protocol: int,
    ip: int,
    perf_sample_dict: Any = None,
) -> None:
    when = common_secs * 1_000_000_000 + common_nsecs
    _out.write(f"R,{when},{common_cpu},{common_pid},{skaddr:x},{protocol},0\n")


def sock__sock_recv_length(
    event_name: str,
    context: Any,
    common_cpu: int,
    common_secs: int,
    common_nsecs: int,
    common_pid: int,
    common_comm: str,
    common_callchain: Any,
    sk: int,
    family: int,
    protocol: int,
    ret: int,
    flags: int,
    perf_sample_dict: Any = None,
) -> None:
    when = common_secs * 1_000_000_000 + common_nsecs
    read = ret - (1 << 32) if ret >= 1 << 31 else ret  # perf hands the int over unsigned
    _out.write(f"V,{when},{common_cpu},{common_pid},{sk:x},{protocol},{read}\n")


def trace_unhandled(event_name: str, context: Any, event_fields_dict: Any, **_: Any) -> None:
    pass
