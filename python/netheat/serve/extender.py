"""The Kubernetes scheduler extender protocol: ``POST /scheduler/filter`` and ``/scheduler/prioritize``.

kube-scheduler sends ``ExtenderArgs`` and reads ``ExtenderFilterResult`` or
a ``HostPriorityList`` (package ``k8s.io/kube-scheduler/extender/v1``).
Those Go types carry no JSON tags, so their JSON keys are the Go field
names: ``{"Pod", "Nodes", "NodeNames"}`` in, ``{"Nodes", "NodeNames",
"FailedNodes", "FailedAndUnresolvableNodes", "Error"}`` and ``[{"Host",
"Score"}]`` out, scores within 0..``MaxExtenderPriority`` (10). Go's decoder
matches keys case-insensitively, so older schedulers' lower-case keys
(``pod``, ``nodes``, ``nodenames``) are accepted too.

``Nodes`` is a full ``v1.NodeList`` (sent when the extender is not
``nodeCacheCapable``); only ``items[].metadata.name`` and
``items[].metadata.labels`` are read, and a filter answer returns the
passing items as they came. ``NodeNames`` (``nodeCacheCapable: true``) is
a list of names. A node is a datacenter host by its name, or by the value
of the node label given with ``--node-label`` (which needs full Nodes;
with names only, by name). The pod's network demand is the bandwidth in
its annotation (default ``netheat.io/network-demand``, e.g. ``"2Gbps"``;
none: 0).

The whole call (reading the body, mapping nodes to hosts, the decisions
and the answer's JSON) is the advisor's, in Rust
(``crates/netheat-advisor/src/extender.rs``): the scheduler calls it at its
own rate. Malformed arguments raise
:class:`~netheat.errors.MalformedRequest` (HTTP 400); a bad demand value
raises :class:`~netheat.errors.InputError` (422). Nodes that map to no
host fail the filter and score 0, with one warning logged per request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from netheat.serve.advisor import AdvisorLike

log = logging.getLogger("netheat.serve")

DEFAULT_DEMAND_ANNOTATION = "netheat.io/network-demand"


@dataclass(frozen=True)
class Extender:
    """The two extender calls on one advisor, with how nodes map to hosts."""

    advisor: AdvisorLike
    node_label: str | None
    demand_annotation: str
    datacenter: str

    def _call(self, decide: Callable[..., tuple[str, str | None]], now_s: float, body: bytes) -> bytes:
        answer, warning = decide(now_s, body, self.node_label, self.demand_annotation, self.datacenter)
        if warning is not None:
            log.warning("%s", warning)
        return answer.encode()

    def filter(self, now_s: float, body: bytes) -> bytes:
        """The ``ExtenderFilterResult``: nodes whose ToR would be hot with the pod's demand fail."""
        return self._call(self.advisor.extender_filter_json, now_s, body)

    def prioritize(self, now_s: float, body: bytes) -> bytes:
        """The ``HostPriorityList``: the advisor's 0..10 score per node, 0 for unmapped nodes."""
        return self._call(self.advisor.extender_prioritize_json, now_s, body)
