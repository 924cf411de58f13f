# Sourced by the image and chart scripts: how podman runs on a machine without a Docker daemon,
# systemd or writable cgroup hierarchy (a CI container running as root). cgroupfs instead of systemd,
# events in a file instead of the journal, runc (Debian's crun refuses this cgroup v1 layout), and
# resource limits no higher than the machine's (podman's defaults raise them, which is not permitted).
PODMAN=(podman --cgroup-manager=cgroupfs --events-backend=file --runtime runc)
PODMAN_ULIMITS=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
