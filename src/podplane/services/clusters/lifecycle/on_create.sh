#!/bin/bash
# podplane's OnCreate lifecycle script for SageMaker HyperPod on EKS.
#
# HyperPod runs it once on every new instance, as root, from a copy of the S3 prefix the
# instance group names. It moves what fills a node's disk -- container images (containerd)
# and pod volumes and logs (kubelet) -- off the small root volume onto the instance's large
# volume: the EBS volume HyperPod mounts at /opt/sagemaker (InstanceStorageConfigs), or the
# instance-store NVMe at /opt/dlami/nvme. AWS's reference base-config on_create.sh does the
# same; this is podplane's own script for it.
set -euo pipefail

LOG=/var/log/provision/podplane-on-create.log
mkdir -p "$(dirname "$LOG")"
exec > >(tee -a "$LOG") 2>&1
log() { echo "[podplane on_create] $*"; }

# The volume to use. HyperPod passes the script no settings: for the instance store, change
# this to /opt/dlami/nvme (the NVMe instance store, larger and faster on p4d and p5).
VOLUME=/opt/sagemaker

wait_for_mount() {  # the volume may be mounted a little after the script starts
  local tries=12
  while (( tries-- > 0 )); do
    mountpoint -q "$1" && return 0
    log "waiting for $1 to be mounted"
    sleep 5
  done
  return 1
}

containerd_root_al2023() {  # a copy of the node's config with `root` on the volume
  local source=/etc/containerd/config.toml target="$VOLUME/containerd/config.toml"
  mkdir -p "$VOLUME/containerd/data-root"
  if [[ -f "$source" ]]; then
    grep -v -E '^[[:space:]]*root[[:space:]]*=' "$source" \
      | awk -v root="root = \"$VOLUME/containerd/data-root\"" '
          !done && /^version[[:space:]]*=/ { print; print root; done = 1; next }
          { print }
          END { if (!done) print root }' > "$target"
  else
    printf 'version = 2\nroot = "%s"\n' "$VOLUME/containerd/data-root" > "$target"
  fi
  mkdir -p /etc/systemd/system/containerd.service.d
  printf '[Service]\nExecStart=\nExecStart=/usr/bin/containerd --config %s\n' "$target" \
    > /etc/systemd/system/containerd.service.d/50-podplane-data-root.conf
  if [[ -d /var/lib/containerd ]]; then
    cp -a /var/lib/containerd/. "$VOLUME/containerd/data-root/"
  fi
}

containerd_root_al2() {
  local config=/etc/eks/containerd/containerd-config.toml
  if [[ -f "$config" ]]; then
    sed -i -E "s|^[#[:space:]]*root[[:space:]]*=.*|root = \"$VOLUME/containerd/data-root\"|" \
      "$config"
  else
    log "no $config: containerd keeps its default root"
  fi
}

kubelet_dir() {  # /var/lib/kubelet becomes a link to the volume
  if [[ -L /var/lib/kubelet ]]; then
    log "/var/lib/kubelet is already a link: $(readlink /var/lib/kubelet)"
    return
  fi
  mkdir -p "$VOLUME/kubelet"
  if [[ -d /var/lib/kubelet ]]; then
    cp -a /var/lib/kubelet/. "$VOLUME/kubelet/"
    rm -rf /var/lib/kubelet
  fi
  ln -s "$VOLUME/kubelet" /var/lib/kubelet
}

main() {
  log "start on $(hostname)"
  if ! wait_for_mount "$VOLUME"; then
    log "$VOLUME is not mounted: containerd and kubelet stay on the root volume"
    return 0
  fi
  # shellcheck disable=SC1091
  source /etc/os-release
  case "${VERSION_ID:-}" in
    2023) containerd_root_al2023 ;;
    2) containerd_root_al2 ;;
    *) log "OS version ${VERSION_ID:-unknown}: containerd left as it is" ;;
  esac
  kubelet_dir
  systemctl daemon-reload  # containerd and kubelet start later, with the new places
  log "containerd and kubelet data now on $VOLUME"
}

main "$@"
