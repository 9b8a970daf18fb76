#!/usr/bin/env bash
# A one-node SLURM cluster on localhost, for nllbench's tests and benchmarks.
#
#   scripts/slurm_local.sh install   # Debian packages slurmctld slurmd slurm-client munge (root)
#   scripts/slurm_local.sh start     # write a private slurm.conf, start munged (if needed), slurmctld, slurmd
#   scripts/slurm_local.sh env       # print 'export SLURM_CONF=...' for the clients (sbatch, squeue)
#   scripts/slurm_local.sh stop      # stop exactly the daemons this script started
#
# Everything lives in $NLLBENCH_SLURM_DIR (default /tmp/nllbench-slurm): the
# configuration, state, spool, logs and the PIDs of what was started. Jobs
# submitted by Snakemake's SLURM executor do not inherit SLURM_CONF (the plugin
# drops SLURM_* variables), so /etc/slurm/slurm.conf must lead to the
# configuration: the script links it there if no slurm.conf exists, refuses to
# run over a foreign one, and removes its link on stop. Without cgroups the
# node needs ProctrackType=proctrack/linuxproc and TaskPlugin=task/none (see
# slurm.conf(5) in the Slurm documentation); without an accounting database
# 'sacct' fails, so the Snakemake executor must poll with 'squeue' (see
# docs/cluster.md and profiles/slurm/config.yaml).
set -euo pipefail

DIR=${NLLBENCH_SLURM_DIR:-/tmp/nllbench-slurm}
CONF="$DIR/slurm.conf"
CTLD_PORT=${NLLBENCH_SLURMCTLD_PORT:-16817}
SLURMD_PORT=${NLLBENCH_SLURMD_PORT:-16818}
WAIT=${NLLBENCH_SLURM_WAIT:-60}

die() { echo "slurm_local: $*" >&2; exit 1; }

install() {
    [ "$(id -u)" = 0 ] || die "install needs root (apt-get)"
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null \
        && command -v munged >/dev/null; then
        echo "slurm_local: SLURM and munge already installed"
        return
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
    echo "slurm_local: installed $(slurmctld -V)"
}

write_conf() {
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log"
    local cpus mem
    cpus=$(nproc)
    mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
    cat > "$CONF" <<CONFEOF
ClusterName=nllbench
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=300
MailProg=/bin/true
ReturnToService=2
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONFEOF
}

start() {
    [ "$(id -u)" = 0 ] || die "start needs root"
    command -v slurmctld >/dev/null || die "SLURM is not installed (run: $0 install)"
    write_conf
    if [ -e /etc/slurm/slurm.conf ] && [ "$(readlink /etc/slurm/slurm.conf)" != "$CONF" ]; then
        die "/etc/slurm/slurm.conf exists and is not this script's: refusing to start a second cluster here"
    fi
    mkdir -p /etc/slurm
    if [ ! -e /etc/slurm/slurm.conf ]; then
        ln -s "$CONF" /etc/slurm/slurm.conf
        touch "$DIR/linked-etc-conf"
    fi
    export SLURM_CONF="$CONF"
    if ! munge -n >/dev/null 2>&1; then  # no working munged: start one
        mkdir -p /run/munge && chown munge:munge /run/munge
        [ -f /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null;
            chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key; }
        runuser -u munge -- /usr/sbin/munged
        for _ in $(seq 1 20); do [ -s /run/munge/munged.pid ] && break; sleep 0.25; done
        cp /run/munge/munged.pid "$DIR/munged.pid"
    fi
    slurmctld -f "$CONF"
    slurmd -f "$CONF" -N localhost
    local t=0
    until scontrol ping 2>/dev/null | grep -q "UP" && sinfo -h -o %T 2>/dev/null | grep -Eq "^idle"; do
        sleep 1
        t=$((t + 1))
        if [ "$t" -ge "$WAIT" ]; then
            tail -n 20 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 || true
            stop
            die "the cluster did not come up within ${WAIT} s"
        fi
    done
    echo "slurm_local: up ($(sinfo -h -o '%P %D %c %m %T')); export SLURM_CONF=$CONF"
}

stop() {
    local name pid
    for name in slurmd slurmctld munged; do
        if [ -f "$DIR/$name.pid" ]; then
            pid=$(cat "$DIR/$name.pid")
            if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
                kill "$pid" 2>/dev/null || true
                for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
                kill -9 "$pid" 2>/dev/null || true
            fi
            rm -f "$DIR/$name.pid"
        fi
    done
    if [ -f "$DIR/linked-etc-conf" ] && [ "$(readlink /etc/slurm/slurm.conf)" = "$CONF" ]; then
        rm -f /etc/slurm/slurm.conf "$DIR/linked-etc-conf"
    fi
    echo "slurm_local: stopped"
}

case "${1:-}" in
    install) install ;;
    start) start ;;
    stop) stop ;;
    env) echo "export SLURM_CONF=$CONF" ;;
    *) die "usage: $0 install|start|env|stop" ;;
esac
