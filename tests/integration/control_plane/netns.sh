#!/usr/bin/env bash
# A small lab of network namespaces for the control plane's end-to-end test
# (issue 17): one namespace for the orchestrator ("hub") with a bridge, and
# one per GPU node, each joined to the bridge by a veth pair.  Addresses are
# in 10.213.0.0/24 inside namespaces this script creates and removes itself:
# no traffic leaves the machine.  Needs root (CI runs as root).
#   netns.sh up PREFIX N     creates PREFIX-hub (10.213.0.1) and PREFIX-n1..nN (10.213.0.1X)
#   netns.sh down PREFIX N   removes them (and whatever runs in them is left to the caller)
set -euo pipefail
cmd=$1 prefix=$2 n=$3

up() {
  ip netns add "$prefix-hub"
  ip -n "$prefix-hub" link set lo up
  ip -n "$prefix-hub" link add br0 type bridge
  ip -n "$prefix-hub" addr add 10.213.0.1/24 dev br0
  ip -n "$prefix-hub" link set br0 up
  for i in $(seq 1 "$n"); do
    ns="$prefix-n$i"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip link add "${prefix:0:6}v$i" type veth peer name eth0 netns "$ns"
    ip link set "${prefix:0:6}v$i" netns "$prefix-hub"
    ip -n "$prefix-hub" link set "${prefix:0:6}v$i" master br0
    ip -n "$prefix-hub" link set "${prefix:0:6}v$i" up
    ip -n "$ns" addr add "10.213.0.$((10 + i))/24" dev eth0
    ip -n "$ns" link set eth0 up
  done
}

down() {
  for i in $(seq 1 "$n"); do
    ip netns del "$prefix-n$i" 2>/dev/null || true
  done
  ip netns del "$prefix-hub" 2>/dev/null || true
}

case "$cmd" in
  up) down; up ;;
  down) down ;;
  *) echo "usage: $0 up|down PREFIX N" >&2; exit 2 ;;
esac
