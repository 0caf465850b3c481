#!/bin/bash
# The baseline of benchmarks/k8s_local.py: Kubernetes brought up on node containers by
# one plain script, no Ansible: the same packages, configuration files (made by the
# benchmark from the driver's own generators), binaries and images as the driver.
#
#   ARTIFACTS=<offline dir> WORK=<dir with containerd.toml, resolv.conf, kubeadm.yaml,
#   kubelet.service, 10-kubeadm.conf, flannel.yml> MASTER=<container> WORKERS="<container> ..."
#   WORKER_IMAGES="<the image archives workers get> ..." plain_kubeadm.sh
set -euo pipefail
: "${ARTIFACTS:?}" "${WORK:?}" "${MASTER:?}" "${WORKERS:=}" "${WORKER_IMAGES:?}"
ADMIN=/etc/kubernetes/admin.conf

prepare() {
    local node=$1 images=$2
    # The node image's Docker engine stopped and its docker0 gone, as the driver does (the
    # kubelet uses containerd; docker0 would hide 172.17.0.0/16).
    docker exec "$node" sh -c 'systemctl disable --now -q docker.socket docker.service 2>/dev/null;
        ip link delete docker0 2>/dev/null; true'
    docker exec "$node" sh -c 'apt-get update -q >/dev/null &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q containerd runc \
            containernetworking-plugins conntrack iptables socat ethtool ebtables >/dev/null &&
        mkdir -p /opt/cni/bin /etc/containerd /etc/kubernetes /etc/systemd/system/kubelet.service.d &&
        cp -n /usr/lib/cni/* /opt/cni/bin/ &&
        sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1'
    docker cp "$WORK/containerd.toml" "$node:/etc/containerd/config.toml"
    docker cp "$WORK/resolv.conf" "$node:/etc/kubernetes/resolv.conf"
    docker exec "$node" systemctl restart containerd
    for bin in kubeadm kubelet kubectl crictl; do
        docker cp "$ARTIFACTS/bin/$bin" "$node:/usr/local/bin/$bin"
    done
    docker cp "$WORK/kubelet.service" "$node:/etc/systemd/system/kubelet.service"
    docker cp "$WORK/10-kubeadm.conf" "$node:/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
    docker exec "$node" sh -c 'systemctl daemon-reload && systemctl enable -q kubelet'
    for image in $images; do
        docker exec -i "$node" ctr -n k8s.io images import - < "$image" >/dev/null
    done
}

pids=()
prepare "$MASTER" "$(echo "$ARTIFACTS"/images/*.tar)" & pids+=($!)
for node in $WORKERS; do
    prepare "$node" "$WORKER_IMAGES" & pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done

docker cp "$WORK/kubeadm.yaml" "$MASTER:/etc/kubernetes/kubeadm.yaml"
docker exec "$MASTER" kubeadm init --config /etc/kubernetes/kubeadm.yaml >/dev/null
docker cp "$WORK/flannel.yml" "$MASTER:/etc/kubernetes/flannel.yml"
docker exec "$MASTER" kubectl --kubeconfig $ADMIN apply -f /etc/kubernetes/flannel.yml >/dev/null
join=$(docker exec "$MASTER" kubeadm token create --print-join-command)
pids=()
for node in $WORKERS; do
    # shellcheck disable=SC2086
    # containerd's socket named, as the driver's JoinConfiguration does (kubeadm before
    # 1.24 would pick Docker's when a node has both).
    docker exec "$node" $join --cri-socket unix:///run/containerd/containerd.sock \
        --ignore-preflight-errors=SystemVerification >/dev/null & pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
docker exec "$MASTER" kubectl --kubeconfig $ADMIN wait node --all --for=condition=Ready --timeout=300s >/dev/null
