"""What the service needs of ``netheat._netheat.Advisor``, as a protocol.

The service is written against this protocol rather than the extension
class so that it type-checks on its own and tests can stand in a small
fake where the Rust decision code is not the subject. Every method of the
real class is thread-safe and releases the GIL; the ``*_json`` methods
return JSON (the decisions as bytes, sent as they are).
"""

from __future__ import annotations

from typing import Protocol


class AdvisorLike(Protocol):
    """The decision API (``netheat._netheat.Advisor``) as the service uses it."""

    @property
    def num_hosts(self) -> int: ...

    def host_names(self) -> list[str]: ...

    def tor_names(self) -> list[str]: ...

    def host_tor(self, host: int) -> int: ...

    def resolve_host(self, text: str) -> int | None: ...

    def uplinks(self) -> list[int]: ...

    def observe(
        self,
        at_s: float,
        links: list[int],
        rates_bps: list[float],
        capacities_bps: list[float] | None = None,
    ) -> None: ...

    def status_json(self, now_s: float) -> str: ...

    def tors_json(self, now_s: float) -> str: ...

    def place_task_json(self, now_s: float, request_json: str | bytes) -> bytes: ...

    def place_replicas_json(self, now_s: float, request_json: str | bytes) -> bytes: ...

    def migrate_json(self, now_s: float, request_json: str | bytes) -> bytes: ...

    def extender_filter_json(
        self,
        now_s: float,
        body: str | bytes,
        node_label: str | None = None,
        demand_annotation: str = ...,
        datacenter: str = "",
    ) -> tuple[str, str | None]: ...

    def extender_prioritize_json(
        self,
        now_s: float,
        body: str | bytes,
        node_label: str | None = None,
        demand_annotation: str = ...,
        datacenter: str = "",
    ) -> tuple[str, str | None]: ...

    def hdfs_loads(self) -> str: ...
