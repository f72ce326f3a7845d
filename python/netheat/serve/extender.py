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

Malformed arguments raise :class:`BadRequest` (HTTP 400); a bad demand
value raises :class:`~netheat.errors.InputError` (422).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

from netheat.errors import InputError
from netheat.serve.advisor import AdvisorLike

log = logging.getLogger("netheat.serve")

MAX_EXTENDER_PRIORITY = 10
"""``MaxExtenderPriority`` of the extender API: scores are 0..10."""

DEFAULT_DEMAND_ANNOTATION = "netheat.io/network-demand"


class BadRequest(Exception):
    """A request that is not what the endpoint reads (HTTP 400)."""


def field(doc: dict[str, Any], name: str) -> Any:
    """``doc[name]``, else a key equal to ``name`` ignoring case (as Go's encoding/json decodes)."""
    if name in doc:
        return doc[name]
    lower = name.lower()
    for k, v in doc.items():
        if k.lower() == lower:
            return v
    return None


@dataclass
class ExtenderArgs:
    """What the service reads of an ``ExtenderArgs``."""

    pod: str
    """``namespace/name`` of the pod, for messages."""
    demand_bps: float
    names: list[str]
    """Candidate node names, in the order sent."""
    labels: list[dict[str, Any]] | None
    """Each node's labels when full Nodes were sent, else None."""
    node_list: dict[str, Any] | None
    """The ``NodeList`` as sent (full form), else None."""


def _pod_demand(pod: dict[str, Any], annotation: str) -> tuple[str, float]:
    from netheat._netheat import parse_bandwidth

    meta = pod.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    who = f"{meta.get('namespace') or 'default'}/{meta.get('name') or '?'}"
    notes = meta.get("annotations")
    value = notes.get(annotation) if isinstance(notes, dict) else None
    if value is None:
        return who, 0.0
    if not isinstance(value, str):
        raise InputError(
            f'pod {who}: annotation {annotation} must be a string such as "2Gbps", got {value!r}'
        )
    try:
        return who, float(parse_bandwidth(value))
    except Exception as e:
        raise InputError(f"pod {who}: annotation {annotation}: {e}") from None


def parse_args(doc: Any, annotation: str) -> ExtenderArgs:
    """Read an ``ExtenderArgs`` document (already JSON-decoded)."""
    if not isinstance(doc, dict):
        raise BadRequest("ExtenderArgs must be a JSON object with Pod and Nodes or NodeNames")
    pod = field(doc, "Pod")
    if not isinstance(pod, dict):
        raise BadRequest("ExtenderArgs has no Pod object")
    who, demand = _pod_demand(pod, annotation)
    nodes = field(doc, "Nodes")
    node_names = field(doc, "NodeNames")
    if nodes is not None:
        if not isinstance(nodes, dict):
            raise BadRequest("ExtenderArgs.Nodes must be a NodeList object with items")
        items = nodes.get("items") or []
        if not isinstance(items, list):
            raise BadRequest("ExtenderArgs.Nodes.items must be a list of Node objects")
        names: list[str] = []
        labels: list[dict[str, Any]] = []
        for i, node in enumerate(items):
            meta = node.get("metadata") if isinstance(node, dict) else None
            if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
                raise BadRequest(f"ExtenderArgs.Nodes.items[{i}] has no metadata.name")
            node_labels = meta.get("labels")
            names.append(meta["name"])
            labels.append(node_labels if isinstance(node_labels, dict) else {})
        return ExtenderArgs(who, demand, names, labels, nodes)
    if node_names is not None:
        if not isinstance(node_names, list) or not all(isinstance(n, str) for n in node_names):
            raise BadRequest("ExtenderArgs.NodeNames must be a list of node names")
        return ExtenderArgs(who, demand, list(node_names), None, None)
    raise BadRequest("ExtenderArgs has neither Nodes nor NodeNames")


class NodeMapper:
    """Kubernetes nodes to datacenter hosts: by node name, or by the value of one node label."""

    def __init__(self, advisor: AdvisorLike, node_label: str | None, datacenter: str) -> None:
        self.advisor = advisor
        self.node_label = node_label
        self.datacenter = datacenter
        self.hosts = {name: i for i, name in enumerate(advisor.host_names())}

    def map(self, args: ExtenderArgs) -> tuple[list[int | None], dict[str, str]]:
        """Host of each node (None if it maps to none) and, for those, the reason."""
        label = self.node_label
        keys: list[Any]
        if label is not None and args.labels is not None:
            keys, by_label = [labels.get(label) for labels in args.labels], True
        else:
            keys, by_label = list(args.names), False
        get = self.hosts.get
        hosts: list[int | None] = [get(k) if isinstance(k, str) else None for k in keys]
        unmapped: dict[str, str] = {}
        if None not in hosts:
            return hosts, unmapped
        for i, (name, key) in enumerate(zip(args.names, keys, strict=True)):
            if hosts[i] is not None:
                continue
            if isinstance(key, str) and key.isdigit():  # a host index, accepted wherever a host is named
                hosts[i] = self.advisor.resolve_host(key)
                if hosts[i] is not None:
                    continue
            if not by_label:
                why = f"node {name} is not a host of {self.datacenter} (hosts are named like r0h0)"
            elif not isinstance(key, str):
                why = f"node {name} has no label {self.node_label}, which names its datacenter host"
            else:
                why = f"node {name}: label {self.node_label}={key} names no host of {self.datacenter}"
            unmapped[name] = f"netheat: {why}"
        return hosts, unmapped


def _decisions(
    advisor: AdvisorLike, now_s: float, hosts: list[int | None], demand_bps: float
) -> list[dict[str, Any] | None]:
    """The advisor's answer for each mapped host, in order (None for nodes that map to no host).

    With stale telemetry the advisor passes every node with score 0 (its fallback).
    """
    mapped = [h for h in hosts if h is not None]
    answer = json.loads(advisor.extender_json(now_s, mapped, demand_bps)) if mapped else {"nodes": []}
    found = iter(answer["nodes"])
    return [next(found) if h is not None else None for h in hosts]


def _warn_unmapped(verb: str, args: ExtenderArgs, unmapped: dict[str, str]) -> None:
    if unmapped:
        shown = ", ".join(list(unmapped)[:5]) + (", ..." if len(unmapped) > 5 else "")
        first = next(iter(unmapped.values())).removeprefix("netheat: ")
        log.warning(
            "scheduler/%s: pod %s: %d of %d node(s) map to no datacenter host (%s): %s",
            verb,
            args.pod,
            len(unmapped),
            len(args.names),
            shown,
            first,
        )


def filter_nodes(
    advisor: AdvisorLike, mapper: NodeMapper, now_s: float, args: ExtenderArgs
) -> dict[str, Any]:
    """The ``ExtenderFilterResult``: nodes whose ToR would be hot with the pod's demand fail."""
    hosts, unmapped = mapper.map(args)
    _warn_unmapped("filter", args, unmapped)
    decisions = _decisions(advisor, now_s, hosts, args.demand_bps)
    failed: dict[str, str] = dict(unmapped)
    passing: list[int] = []
    for i, (name, d) in enumerate(zip(args.names, decisions, strict=True)):
        if d is None:
            continue
        if d["pass"]:
            passing.append(i)
        else:
            failed[name] = f"netheat: {d['reason']}"
    result: dict[str, Any] = {
        "Nodes": None,
        "NodeNames": None,
        "FailedNodes": failed,
        "FailedAndUnresolvableNodes": {},
        "Error": "",
    }
    if args.node_list is not None:
        items = args.node_list.get("items") or []
        result["Nodes"] = {**args.node_list, "items": [items[i] for i in passing]}
    else:
        result["NodeNames"] = [args.names[i] for i in passing]
    return result


def prioritize_nodes(advisor: AdvisorLike, mapper: NodeMapper, now_s: float, args: ExtenderArgs) -> str:
    """The ``HostPriorityList`` as JSON text: the advisor's 0..10 score per node, 0 for unmapped nodes.

    Written out directly (it is called at the scheduler's rate): a third of
    the time of ``json.dumps`` on a list of dicts.
    """
    hosts, unmapped = mapper.map(args)
    _warn_unmapped("prioritize", args, unmapped)
    mapped = [h for h in hosts if h is not None]
    # The scores alone: the reasons of the filter's answer are not part of a HostPriorityList.
    found = iter(advisor.extender_scores(now_s, mapped, args.demand_bps) if mapped else [])
    items = []
    for name, h in zip(args.names, hosts, strict=True):
        score = 0 if h is None else min(MAX_EXTENDER_PRIORITY, max(0, next(found)))
        items.append(f'{{"Host":{encode_basestring(name)},"Score":{score}}}')
    return "[" + ",".join(items) + "]"
