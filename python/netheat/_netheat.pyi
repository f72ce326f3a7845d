"""Type stubs of the Rust extension module."""

from collections.abc import Callable
from os import PathLike
from typing import Any, final

# The names the extension module exports (`#[pymodule]` fills its `__all__`);
# stubtest (`make lint`) checks this list and every signature against the build.
__all__ = [
    "Advisor",
    "Topology",
    "__version__",
    "advisor_schema",
    "baraat_point",
    "ccp_point",
    "data_load_cdf",
    "data_load_coflows",
    "data_load_table",
    "data_load_traffic_matrix",
    "data_registry",
    "data_require_dir",
    "data_resolve_dir",
    "data_status",
    "generate_workload",
    "memory_budget",
    "packet_cloudburst_point",
    "packet_memcache_max_rate",
    "parse_bandwidth",
    "parse_bytes",
    "parse_duration",
    "run_scenario",
    "run_simulation",
    "scenario_schema",
    "set_memory_budget",
    "sinbad_point",
    "subways_shuffle",
    "subways_tor_failure",
    "utp_cluster",
]

__version__: str

@final
class Topology:
    @staticmethod
    def load(path: str | PathLike[str], overrides: dict[str, Any] | None = None) -> Topology: ...
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

@final
class Advisor:
    """Placement decisions for a live cluster (netheat-advisor); answers are JSON text."""

    def __new__(cls, topology: str | PathLike[str], config: str | PathLike[str] | None = None) -> Advisor: ...
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
    def set_storage(self, used_bytes: list[float] | None = None, live: list[bool] | None = None) -> None: ...
    def status_json(self, now_s: float) -> str: ...
    def tors_json(self, now_s: float) -> str: ...
    def hdfs_loads(self) -> str: ...
    def place_task_json(self, now_s: float, request_json: str | bytes) -> str: ...
    def place_replicas_json(self, now_s: float, request_json: str | bytes) -> str: ...
    def migrate_json(self, now_s: float, request_json: str | bytes) -> str: ...
    def extender_json(self, now_s: float, hosts: list[int], demand_bps: float) -> str: ...
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

def advisor_schema() -> str: ...
def parse_duration(text: str) -> float: ...
def parse_bandwidth(text: str) -> float: ...
def parse_bytes(text: str) -> float: ...
def memory_budget() -> int: ...
def set_memory_budget(bytes: int) -> None: ...
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
    dense: str = "auto",
) -> dict[str, Any]: ...
def run_scenario(
    path: str | None = None,
    text: str | None = None,
    file: str = ...,  # "<scenario>"
    base: str | None = None,
    overrides: list[tuple[str, str]] = ...,
    data_dir: str | None = None,
    extra_roots: list[str] = ...,
    progress: Callable[[int, int], None] | None = None,
    check_only: bool = False,
) -> dict[str, Any]: ...
def scenario_schema() -> str: ...
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
    fanout: int = 39,
    mids: int = 0,
    pods: int = 30,
    racks_per_pod: int = 30,
    hosts_per_rack: int = 40,
    host_bps: float = 1e9,
    oversubscription: float = 2.0,
    aggregators: int = 30,
    workers: int = 0,
    batch: bool = False,
    heavy_percentile: float = 0.8,
    lbs: int = 1,
    poll_s: float = 100e-6,
    spc: bool = False,
    rtt_s: float = 100e-6,
    delta_frac: float = 0.02,
    flow_cv: float = 0.0,
    compute_s: float = 0.0,
    placement: str = "rack",
    selectivity: float = 0.03,
    data_dir: str | None = None,
    extra_roots: list[str] = ...,
) -> dict[str, Any]: ...

# netheat.experiments.storage: Sinbad and CCP placement points.
def sinbad_point(
    *,
    policy: str = "sinbad",
    seed: int = 1,
    racks: int = 150,
    hosts_per_rack: int = 20,
    host_bps: float = 1e9,
    oversubscription: float = 10.0,
    disk_write_bps: float | None = ...,  # 400e6 (Rust `Some(400e6)`)
    block_bytes: float = 268435456.0,
    replicas: int = 3,
    faults: int = 1,
    duration_s: float = 3600.0,
    drain_s: float = 600.0,
    block_requests_per_s: float = 4.0,
    mean_file_blocks: float = 1.47,
    shuffle_scale: float = 1.0,
    max_mapper_racks: int = 6,
    delta_s: float = 1.0,
    alpha: float = 0.2,
    threshold_bytes: float = 10e6,
    q_s: float = 10.0,
    report_loss: float = 0.0,
    capacity_bytes: float = 4e12,
    balance_threshold: float = 0.1,
    trace: str = "coflow-fb2010",
    data_dir: str | None = None,
    also_q_s: list[float] = ...,
    optimistic: bool = True,
) -> dict[str, Any]: ...
def ccp_point(
    *,
    policy: str = "ccp",
    seed: int = 1,
    racks: int = 30,
    hosts_per_rack: int = 10,
    client_racks: int = 10,
    host_bps: float = 10e9,
    oversubscription: float = 4.0,
    class_factor: tuple[float, float, float] = ...,  # (4.0, 1.0, 0.25)
    uplink_spread: float = 0.0,
    load: float = 0.7,
    uplink_load: float = 0.0,
    read_fraction: float = 0.7,
    chunk_min: float = 100e3,
    chunk_max: float = 1e6,
    prepopulate: int = 20000,
    prepopulate_policy: str | None = None,
    read_written: bool = False,
    write_fanout: bool = False,
    ops: int = 100000,
    replicas: int = 3,
    seek_s: float = 100e-6,
    disk_bytes_per_s: float = 1e9,
    disks_per_host: int = 1,
    capacity_bytes: float = 1e9,
    balance_threshold: float = 0.1,
    rebalance_every_ops: int = 1000,
    rebalance_target: float = 0.08,
) -> dict[str, float]: ...

# netheat.data: registry, checksum status and loaders (see netheat/data.py).
def data_resolve_dir(
    data_dir: str | None = None, extra_roots: list[str] = ...
) -> tuple[str, str, str, bool]: ...
def data_require_dir(data_dir: str | None = None, extra_roots: list[str] = ...) -> str: ...
def data_registry() -> list[dict[str, Any]]: ...
def data_status(
    names: list[str] = ..., data_dir: str | None = None, extra_roots: list[str] = ...
) -> list[dict[str, Any]]: ...
def data_load_cdf(
    name: str, data_dir: str | None = None, extra_roots: list[str] = ...
) -> tuple[tuple[str, bytes], tuple[str, bytes]]: ...
def data_load_coflows(
    name: str, data_dir: str | None = None, extra_roots: list[str] = ...
) -> dict[str, Any]: ...
def data_load_traffic_matrix(
    name: str, data_dir: str | None = None, extra_roots: list[str] = ...
) -> dict[str, Any]: ...
def data_load_table(
    name: str, data_dir: str | None = None, extra_roots: list[str] = ...
) -> tuple[str, dict[str, list[Any]]]: ...

# netheat.experiments.subways: Subways shuffle jobs and ToR failures.
def subways_shuffle(
    topology: Topology,
    first_rack: int,
    nodes: int,
    bytes_per_pair: float,
    policy: str,
    seed: int,
    t_rebind_s: float = 0.01,
    aggressiveness: float = 0.5,
    failed_tor: int | None = None,
    placement: str = "contiguous",
    pattern: str = "all-to-all",
    flows_per_pair: int = 1,
) -> dict[str, Any]: ...
def subways_tor_failure(topology: Topology, tor: int) -> dict[str, Any]: ...
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
    isolation: str = "priority",
    shared_buffer_per_port: int = 192000,
    alpha: float = 1.0,
    cb_timeout_s: float | None = None,
    pias_thresholds: list[int] | None = None,
) -> dict[str, Any]: ...
def packet_memcache_max_rate(
    variant: str,
    oversubscription: float,
    seed: int,
    racks: int = 8,
    hosts_per_rack: int = 8,
    ports: int = 2,
    host_bps: float = 10e9,
    request_bytes: int = 50,
    response_bytes: int = 1500,
    duration_s: float = 0.01,
    rto_min_s: float = 0.005,
    target_s: float = 0.001,
    start_per_s: float = 1e5,
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
