"""Type stubs of the Rust extension module."""

from collections.abc import Callable
from os import PathLike
from typing import Any

__version__: str

class Topology:
    @staticmethod
    def load(path: str | PathLike[str]) -> Topology: ...
    @staticmethod
    def from_toml(text: str, file: str = "<string>") -> Topology: ...
    @property
    def kind(self) -> str: ...
    @property
    def num_hosts(self) -> int: ...
    @property
    def num_racks(self) -> int: ...
    @property
    def num_links(self) -> int: ...
    def summary(self) -> dict[str, Any]: ...
    def nodes(self) -> dict[str, list[Any]]: ...
    def links(self) -> dict[str, list[Any]]: ...
    def racks(self) -> dict[str, list[Any]]: ...
    def host_ports(self) -> dict[str, list[Any]]: ...
    def events(self) -> dict[str, list[Any]]: ...
    def host(self, host: int | str) -> int: ...
    def paths(self, src: int | str, dst: int | str) -> list[list[int]]: ...
    def num_paths(self, src: int | str, dst: int | str) -> int: ...

def parse_duration(text: str) -> float: ...
def parse_bandwidth(text: str) -> float: ...
def parse_bytes(text: str) -> float: ...
def run_simulation(
    topology: Topology,
    flows_csv: str | None,
    flows: dict[str, Any] | None,
    window_s: float,
    seed: int,
    progress: Callable[[int, int], None] | None,
    workload: str | None = None,
    data_dir: str | None = None,
    extra_roots: list[str] = ...,
) -> dict[str, Any]: ...
def generate_workload(
    topology: Topology,
    workload: str,
    seed: int,
    data_dir: str | None = None,
    extra_roots: list[str] = ...,
) -> dict[str, Any]: ...

# netheat.experiments.baraat: one task-aware flow-scheduling point.
def baraat_point(
    *,
    workload: str,
    policy: str,
    load: float,
    tasks: int,
    seed: int,
    app: str = "one-stage",
    fanout: int = 40,
    pods: int = 30,
    racks_per_pod: int = 30,
    hosts_per_rack: int = 40,
    host_bps: float = 1e9,
    oversubscription: float = 2.0,
    aggregators: int = 360,
    workers: int = 0,
    batch: bool = False,
    heavy_percentile: float = 0.8,
    lbs: int = 1,
    poll_s: float = 100e-6,
    spc: bool = False,
    rtt_s: float = 100e-6,
    delta_frac: float = 0.02,
) -> dict[str, Any]: ...

def packet_cloudburst_point(
    variant: str,
    racks: int,
    hosts_per_rack: int,
    spines: int,
    host_bps: float,
    uplink_bps: float,
    load: float,
    fanin: int,
    msg_bytes: list[int],
    incasts: int,
    incast_gap_s: float,
    drain_s: float,
    seed: int,
    ecn_threshold_bytes: int = 30000,
    port_buffer_bytes: int = 150000,
    cloudburst_queue_bytes: int = 12000,
    rto_min_s: float = 0.005,
    prop_delay_s: float = 1e-6,
) -> dict[str, Any]: ...

# netheat.experiments.utp: one cluster-scheduling run.
def utp_cluster(
    topology: Topology,
    policy: str,
    seed: int,
    hours: float,
    cpu_load: float = 0.6,
    bw_median_per_core: float = 10e6,
    heavy_share: float = 0.05,
    heavy_factor: float = 12.0,
    estimate_sigma: float = 0.3,
    missing_estimate_share: float = 0.0,
    candidates: int = 32,
    incident_at_s: float = 0.0,
    incident_tors: list[int] = ...,
    incident_factor: float = 0.5,
    warmup_s: float = 3600.0,
) -> dict[str, Any]: ...
