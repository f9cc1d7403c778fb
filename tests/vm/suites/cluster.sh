# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# cluster.sh -- a real Pacemaker + corosync cluster on the two guests:
# README.md's "A two-node cluster, step by step", run as written, then
# crash failover, failback, a stale copy and a split brain
#
# Topology (the bed has two guests, so each is a whole node): the target
# guest is node1, the initiator guest node2. Both run rpmemd (a "dir"
# region ha on a tmpfs overlay of /var), corosync (knet, two_node) and
# Pacemaker, with the agent ocf:rpmem:rpmem as a promotable clone (each
# node's copy ha/db on its own rpmemd) and the application (ocf:heartbeat:
# anything running /usr/local/bin/db-app) colocated with the Promoted
# role: tests/pobj_app under the preload library on the Promoted node's
# pool file /var/lib/db/db.obj, replicating it live to the OTHER node's
# copy, with one transaction after another, each logged ("committed N")
# once it returned, i.e. once the other copy acknowledged it; at start it
# prints the counter it found ("counter M"). Resource-level fencing (the
# agent's fencing=resource-only, the application's fence-peer handler
# rpmem-fence-peer: a copy the application goes on without is banned
# from the Promoted role until resynced); no stonith (stonith-enabled=
# false, as the README explains): a crash is simulated by SIGKILL of the
# node's application, rpmemd, corosync and Pacemaker daemons, and the
# node's /run and /dev/shm cleared as a reboot would.
#
# The README's blocks (<!-- ha:NAME -->) run with bash -e as deploy.sh
# runs its walk-through: 192.0.2.10 -> node1's address, 192.0.2.11 ->
# node2's, ADDR=... -> the node's own, the preload library's installed
# path -> the build tree's, /usr/bin/myapp -> pobj_app (check, then
# transactions), `sudo` a function. What installing does is done first:
# overlays (tmpfs) on /etc, /var, /usr/local and /usr/lib/ocf/resource.d,
# the user rpmemd and its directories, the agent copied into
# /usr/lib/ocf/resource.d/rpmem, the build tree first in PATH.
#
# The initiator (node2) drives the tests; the target (node1) serves its
# requests (req-NAME, answered by rep-NAME) until the initiator is done.
# node2 never crashes, so its crm_mon is the view the checks read.
#   1. the cluster forms, db-clone is promoted (on node1, moved there if
#      Pacemaker chose node2) and the application runs there.
#   c. switchover to node2 and failback to node1 (crm_resource --move
#      --promoted): node1's application finds every transaction node2
#      logged as committed, and node1's promote pulled only the blocks
#      that differ into its (older) pool file (the agent's log line).
#   a. node1 crashes: Pacemaker promotes node2 (its copy acknowledged
#      every transaction) and node2's application finds a counter >= the
#      last transaction node1 logged as committed. node1 returns: node2's
#      application resyncs node1's copy with what it missed (rpmemd's
#      bytes_written on node1, less than the pool), and node1, fenced
#      by node2's application meanwhile, is unfenced.
#   b. the Promoted node's copy on the other node cut off (rpmemd's
#      ports), then the Promoted node crashes: the cut-off copy was
#      fenced, is never promoted; the crashed node returns and is
#      promoted with every acknowledged write.
#   d. a full partition: without stonith both sides may be promoted (a
#      partition looks like a crash); if so, the split brain is refused
#      and reported on both nodes and one node is Promoted after the
#      heal; if not, the Promoted node resyncs the other's copy.
# Time budget: about 6 minutes (corosync's token is 10 s, Pacemaker's
# timeouts are generous; every wait is for a condition, bounded).

CL_README=$RPMEM_SRC/README.md
CL_DIR=/tmp/cluster.suite
CL_OVL=/run/cluster-ovl
CL_CTL=$RPMEM_BUILD/rpmemctl
CL_APPLOG=/var/log/db-app.log
CL_APPERR=/var/log/db-app.err
CL_PCMKLOG=/var/log/pacemaker/pacemaker.log
CL_POOL_BLOCKS=256
# the tests run, in this order: c (switchover, failback), a (crash
# failover), b (stale copy), d (split brain: last, it leaves one for the
# operator)
CL_PARTS=${SUITE_CLUSTER_PARTS:-c a b d}

# cl_block NAME -- the shell block marked <!-- ha:NAME --> in README.md
cl_block()
{
	awk -v mark="<!-- ha:$1 -->" '
		$0 == mark { want = 1; next }
		want && /^```/ {
			if (inside) { inside = 0; want = 0 } else inside = 1
			next
		}
		inside { print }
	' "$CL_README"
}

# cl_run NAME -- run block NAME as the README has it (see the top)
cl_run()
{
	local name=$1 script=$CL_DIR/block.$1.sh

	if [ "$(cl_block "$name" | wc -l)" -eq 0 ]; then
		tap_not_ok "README block ha:$name is missing"
		return 1
	fi
	{
		echo "set -e"
		echo "sudo() { \"\$@\"; }"
		echo "cd '$CL_DIR'"
		cl_block "$name" |
			sed -e "s/^ADDR=192\\.0\\.2\\.10\$/ADDR=$MY_IP/" \
			    -e "s/192\\.0\\.2\\.10/$TARGET_IP/g" \
			    -e "s/192\\.0\\.2\\.11/$INITIATOR_IP/g" \
			    -e "s|/usr/lib/x86_64-linux-gnu/rpmem/librpmem_preload.so|$RPMEM_BUILD/librpmem_preload.so|" \
			    -e "s|/usr/sbin/rpmem-fence-peer|$RPMEM_SRC/ocf/rpmem-fence-peer|" \
			    -e "s|^exec /usr/bin/myapp \\(.*\\)\$|exec $RPMEM_BUILD/tests/pobj_app \\1 check pace:50000 records:100000000|"
	} >"$script"
	echo "### $(date +%T)" >>"$(vm_log)"
	tap_check "$VM_ROLE: README block ha:$name runs ($(cl_block "$name" |
		head -n 1 | cut -c 1-50))" bash -x "$script"
}

# cl_overlay DIR -- DIR writable: an overlay with its upper layer on tmpfs
cl_overlay()
{
	local d=$CL_OVL${1//\//_}

	mkdir -p "$d/upper" "$d/work" &&
		mount -t overlay overlay \
			-o "lowerdir=$1,upperdir=$d/upper,workdir=$d/work" "$1"
}

CL_DIRS="/etc /var /root /usr/local /usr/lib/ocf/resource.d"

# cl_install -- the overlays, then what the packages' install does
cl_install()
{
	local dir

	modprobe overlay || return 1
	for dir in $CL_DIRS; do
		cl_overlay "$dir" || return 1
	done
	systemd-sysusers "$RPMEM_SRC/systemd/rpmemd.sysusers" &&
		systemd-tmpfiles --create "$RPMEM_SRC/systemd/rpmemd.tmpfiles" &&
		mkdir -p /usr/lib/ocf/resource.d/rpmem /var/log/corosync &&
		install -m 755 "$RPMEM_SRC/ocf/rpmem" \
			/usr/lib/ocf/resource.d/rpmem/rpmem &&
		id rpmemd && id hacluster
}

# cl_uninstall -- remove the overlays again
cl_uninstall()
{
	local dir

	for dir in /usr/lib/ocf/resource.d /usr/local /root /var /etc; do
		umount -l "$dir" 2>/dev/null
	done
	rm -rf "$CL_OVL" "$CL_DIR"
}

# cl_node -- this guest's cluster node name
cl_node()
{
	[ "$VM_ROLE" = target ] && echo node1 || echo node2
}

# cl_is DESC GOT WANT -- ok if GOT equals WANT
cl_is()
{
	if [ "$2" = "$3" ]; then
		tap_ok "$1"
	else
		echo "### $1: got '$2', expected '$3'" >>"$(vm_log)"
		tap_not_ok "$1 (got '$2', expected '$3')"
	fi
}

# cl_mon -- crm_mon's one-shot view (empty if the local cluster is down)
cl_mon()
{
	timeout 60 crm_mon -1 2>/dev/null
}

# cl_promoted -- the node(s) where db-clone is Promoted
cl_promoted()
{
	cl_mon | sed -n 's/.*Promoted: \[ \(.*\) \].*/\1/p'
}

# cl_one_promoted -- db-clone Promoted on one node, its name in CL_P
cl_one_promoted()
{
	CL_P=$(cl_promoted)
	[[ "$CL_P" =~ ^node[12]$ ]]
}

# cl_until SECS CMD... -- until CMD succeeds, at most SECS seconds (a
# look a second: crm_mon and pcs are slow under TCG)
cl_until()
{
	vm_poll $(($1 + 1)) 1 "" "${@:2}"
}

# cl_online -- both nodes online
cl_online()
{
	cl_mon | grep -q 'Online: \[ node1 node2 \]'
}

# cl_running_on NODE -- db-clone Promoted on NODE alone, the application
# started there
cl_running_on()
{
	local m

	m=$(cl_mon)
	grep -q "Promoted: \\[ $1 \\]" <<<"$m" &&
		grep -Eq "\\bapp\\b.*Started $1" <<<"$m"
}

# cl_last_committed LOG -- the last transaction LOG says was committed
cl_last_committed()
{
	sed -n 's/^committed \([0-9]*\)$/\1/p' "$1" | tail -n 1
}

# cl_counter LOG -- the counter the application's last start found
cl_counter()
{
	sed -n 's/^counter \([0-9]*\)$/\1/p' "$1" | tail -n 1
}

# cl_written HOST -- bytes_written of HOST's copy ha/db (its rpmemd's
# count since it started)
cl_written()
{
	"$CL_CTL" list --json "$1/ha/db" | jq -er '.pools[0].bytes_written'
}

# cl_diag -- the cluster's view and the agent's log lines, to the log
cl_diag()
{
	{
		echo "### crm_mon on $(cl_node):"
		cl_mon
		echo "### rpmem agent lines of $CL_PCMKLOG:"
		grep -E 'rpmem\(db\)|Result of .* for (db|app) ' \
			"$CL_PCMKLOG" 2>/dev/null | tail -n 40
		echo "### $CL_APPERR:"
		tail -n 20 "$CL_APPERR" 2>/dev/null
	} >>"$(vm_log)" 2>&1
}

# --- requests run on either node ------------------------------------------

# cl_req_crash -- this node crashes: SIGKILL of the application, rpmemd,
# corosync and Pacemaker; /run's resource state and /dev/shm's IPC files
# go as a reboot would take them. The last committed transaction the
# application logged goes to $RESULTS/cluster.acked
cl_req_crash()
{
	local p

	for p in $(pgrep -x pobj_app) $(pgrep -x rpmemd) \
		 $(pgrep -x pacemakerd) $(pgrep -x corosync) \
		 $(pgrep '^pacemaker-'); do
		kill -KILL "$p" 2>/dev/null
	done
	cl_until 30 sh -c '! pgrep -x pobj_app && ! pgrep -x rpmemd &&
		! pgrep -x corosync && ! pgrep "^pacemaker"' >/dev/null
	cl_is "$(cl_node) crashed: no application, rpmemd, corosync or Pacemaker left" \
		"$(pgrep -c -x 'pobj_app|rpmemd|corosync|pacemakerd')" 0
	rm -rf /run/resource-agents/* /run/anything_* /dev/shm/qb-* \
		/run/crm/* 2>/dev/null
	cl_last_committed "$CL_APPLOG" >"$RESULTS/$VM_SUITE.acked"
	tap_diag "$(cl_node)'s application had logged transaction $(cat "$RESULTS/$VM_SUITE.acked") as committed when it was killed"
}

# cl_req_revive -- this node boots again: rpmemd, corosync, Pacemaker
cl_req_revive()
{
	cl_run rpmemd-nosystemd
	cl_until 60 vm_listening 7636 ||
		tap_not_ok "$(cl_node)'s rpmemd does not listen again"
	cl_run start-nosystemd
}

# cl_req_promstat -- the agent's last "promoted:" line here, to RESULTS
cl_req_promstat()
{
	grep 'rpmem: promoted:' "$CL_PCMKLOG" | tail -n 1 \
		>"$RESULTS/$VM_SUITE.promoted"
	cl_applog >"$RESULTS/$VM_SUITE.applog.$(cl_node)"
}

# cl_applog -- what the checks read of the application's log: every
# "counter" line (one per start) and the last lines
cl_applog()
{
	grep '^counter ' "$CL_APPLOG" 2>/dev/null
	tail -n 100 "$CL_APPLOG" 2>/dev/null
}

# cl_req_mon -- this node's crm_mon view and its application's logs,
# to RESULTS (cluster.mon.NODE, cluster.applog.NODE, cluster.apperr.NODE)
cl_req_mon()
{
	cl_mon >"$RESULTS/$VM_SUITE.mon.$(cl_node)"
	cl_applog >"$RESULTS/$VM_SUITE.applog.$(cl_node)"
	cp "$CL_APPERR" "$RESULTS/$VM_SUITE.apperr.$(cl_node)" 2>/dev/null
}

# cl_req_opsync -- the operator's way out when no copy could be promoted
# after the Promoted node's crash: on that node, its pool file (every
# write it acknowledged) synced to its own copy, the failures cleared
cl_req_opsync()
{
	tap_check "$(cl_node): the operator syncs the pool file to the local copy (rpmemctl sync)" \
		"$CL_CTL" sync /var/lib/db/db.obj 127.0.0.1/ha/db
	crm_resource --cleanup -r db-clone >>"$(vm_log)" 2>&1
}

# cl_req_cut -- this node's copy cut off from the other node's
# application: rpmemd's ports (TCP 7636, 7637) and RoCE (UDP 4791) from
# the peer dropped on eth0; corosync still passes
cl_req_cut()
{
	tap_check "$(cl_node): its rpmemd cut off from $PEER_IP (tc flower drop of TCP 7636/7637 and UDP 4791)" \
		sh -c "tc qdisc add dev eth0 clsact &&
		       for f in 'tcp dst_port 7636' 'tcp dst_port 7637' 'udp dst_port 4791'; do
			tc filter add dev eth0 ingress protocol ip flower src_ip $PEER_IP ip_proto \$f action drop || exit 1
		       done"
}

# cl_req_heal -- undo cl_req_cut or cl_part
cl_req_heal()
{
	tc qdisc del dev eth0 clsact 2>>"$(vm_log)"
}

# cl_req_stalewatch -- on the node left with the stale copy, once the
# other is gone from its view and Pacemaker settled (or 240 s passed):
# "promoted" or "not-promoted" to RESULTS/cluster.stale, and whether
# Pacemaker tried a promotion here meanwhile ("tried" or "untried") to
# RESULTS/cluster.tried
cl_req_stalewatch()
{
	local me peer=node1 v=not-promoted t=untried n0

	me=$(cl_node)
	[ "$me" = node1 ] && peer=node2
	n0=$(grep -c "promote operation for db on $me" "$CL_PCMKLOG")
	cl_until 180 sh -c "crm_mon -1 2>/dev/null | grep -q 'OFFLINE: \[ $peer \]'"
	crm_resource --wait --timeout=240 >>"$(vm_log)" 2>&1
	cl_mon | grep -q "Promoted: \[ $me \]" && v=promoted
	[ "$(grep -c "promote operation for db on $me" "$CL_PCMKLOG")" -gt "$n0" ] &&
		t=tried
	{
		echo "### stalewatch on $me: $v, $t"
		cl_mon
		grep -E 'rpmem\(db\)|promote operation for db' "$CL_PCMKLOG" | tail -n 6
	} >>"$(vm_log)" 2>&1
	echo "$v" >"$RESULTS/$VM_SUITE.stale"
	echo "$t" >"$RESULTS/$VM_SUITE.tried"
}

# cl_fenced NODE -- the fence constraint of NODE is in this node's CIB
cl_fenced()
{
	cibadmin --query --scope constraints \
		--xpath "//rsc_location[@id='rpmem-fence-db-clone-$1']" \
		>/dev/null 2>&1
}

# cl_req_sbcheck -- how many "split brain" lines this node logged (its
# rpmemd, its application, the agent) to RESULTS/cluster.sb.NODE
cl_req_sbcheck()
{
	cat /var/log/rpmemd.log "$CL_APPERR" "$CL_PCMKLOG" 2>/dev/null |
		grep -ci 'split brain' >"$RESULTS/$VM_SUITE.sb.$(cl_node)"
	{
		echo "### split brain lines on $(cl_node):"
		grep -hi 'split brain' /var/log/rpmemd.log "$CL_APPERR" \
			"$CL_PCMKLOG" 2>/dev/null | tail -n 6
	} >>"$(vm_log)"
}

# --- target (node1) -------------------------------------------------------

# cl_serve -- act on node2's requests until it is done
cl_serve()
{
	vm_serve cl_requests
}

# cl_requests -- act on the requests node2 made since the last look
cl_requests()
{
	local sync=$RESULTS/.sync req

	for req in crash revive promstat mon opsync cut heal \
		   stalewatch sbcheck; do
		if [ -e "$sync/$VM_SUITE.initiator.req-$req" ]; then
			rm -f "$sync/$VM_SUITE.initiator.req-$req"
			"cl_req_$req"
			vm_signal "rep-$req"
		fi
	done
}

# cl_setup_common -- both nodes: install, key, rpmemd, the application's
# wrapper; the caller exchanged the key before
cl_setup_node()
{
	cl_run node || return 1
	cl_run rpmemd-nosystemd || return 1
	if cl_until 60 vm_listening 7636; then
		tap_ok "$(cl_node)'s rpmemd listens on 7636"
	else
		tap_not_ok "$(cl_node)'s rpmemd listens on 7636"
		cat /var/log/rpmemd.log >>"$(vm_log)" 2>&1
		return 1
	fi
	cl_run app
}

target_main()
{
	rm -rf "$CL_DIR"
	mkdir -p "$CL_DIR"
	export PATH=$RPMEM_BUILD:$PATH
	if ! command -v pacemakerd corosync crm >/dev/null; then
		tap_not_ok "pacemaker, corosync and crmsh are installed (packaging/install-deps.sh)"
		vm_abort "no pacemaker"
		return
	fi
	if ! tap_check "node1: install (overlays, user rpmemd, the agent)" \
		cl_install; then
		vm_abort "install failed"
		return
	fi
	cl_run key
	install -m 600 /etc/rpmem/ha.psk "$RESULTS/$VM_SUITE.psk"
	vm_signal key
	cl_setup_node || { vm_abort "node1 set-up failed"; return; }
	cl_run corosync
	install -m 600 /etc/corosync/corosync.conf /etc/corosync/authkey \
		"$RESULTS/"
	vm_signal corosync
	cl_run start-nosystemd
	if ! vm_wait started 300; then
		return
	fi
	if tap_check "the cluster forms: node1 and node2 online (crm_mon)" \
		cl_until 300 cl_online; then
		# the application made its pool file here; both copies get it
		tap_check "node1: the application makes its pool file" \
			"$RPMEM_BUILD/tests/pobj_app" /var/lib/db/db.obj set:0:first
		if vm_wait rpmemd-up 300; then
			cl_run pool
			cl_run resources
		fi
	else
		cl_diag
	fi
	vm_signal resources
	cl_serve
}

target_post()
{
	local p

	[ -d "$CL_DIR" ] || return
	cl_diag
	cp "$CL_PCMKLOG" "$RESULTS/$VM_SUITE.pacemaker.node1.log" 2>/dev/null
	for p in $(pgrep -x pobj_app) $(pgrep -x pacemakerd) \
		 $(pgrep '^pacemaker-') $(pgrep -x corosync) $(pgrep -x rpmemd); do
		kill -KILL "$p" 2>/dev/null
	done
	rm -f "$RESULTS/corosync.conf" "$RESULTS/authkey"
	cl_uninstall
}

# --- initiator (node2) ----------------------------------------------------

# cl_ask NAME [SECS] -- have node1 do NAME, wait until it did
cl_ask()
{
	rm -f "$RESULTS/.sync/$VM_SUITE.target.rep-$1"
	vm_signal "req-$1"
	vm_wait "rep-$1" "${2:-$VM_WAIT_TIMEOUT}"
}

# cl_part NAME -- true if test NAME is in SUITE_CLUSTER_PARTS
cl_part()
{
	[[ " $CL_PARTS " == *" $1 "* ]]
}

# cl_on NODE REQ -- request REQ run on NODE (here, or asked of node1)
cl_on()
{
	if [ "$1" = "$(cl_node)" ]; then
		"cl_req_$2"
	else
		cl_ask "$2"
	fi
}

# cl_other NODE -- the other node
cl_other()
{
	[ "$1" = node1 ] && echo node2 || echo node1
}

# cl_ip NODE -- its address
cl_ip()
{
	[ "$1" = node1 ] && echo "$TARGET_IP" || echo "$INITIATOR_IP"
}

# cl_mon_of NODE -- NODE's own crm_mon view
cl_mon_of()
{
	cl_on "$1" mon >/dev/null
	cat "$RESULTS/$VM_SUITE.mon.$1"
}

# cl_log_of NODE -- a copy of NODE's application log (stdout), fresh
cl_log_of()
{
	cl_on "$1" mon >/dev/null
	echo "$RESULTS/$VM_SUITE.applog.$1"
}

# cl_ncounters NODE -- how many times NODE's application started (its
# "counter" lines)
cl_ncounters()
{
	grep -c '^counter ' "$(cl_log_of "$1")"
}

# cl_new_start NODE N -- NODE's application started more than N times
cl_new_start()
{
	[ "$(cl_ncounters "$1")" -gt "$2" ]
}

# cl_committed_ge NODE N -- NODE's application committed transaction N
cl_committed_ge()
{
	[ "$(cl_last_committed "$(cl_log_of "$1")")" -ge "$2" ] 2>/dev/null
}

# cl_move DESC NODE -- the Promoted role moved to NODE (crm_resource
# --move --promoted, cleared once done); ok once db-clone is Promoted
# there and the application started there
cl_move()
{
	local desc=$1 node=$2

	echo "### $(date +%T) crm_resource --move --promoted -r db-clone -N $node" >>"$(vm_log)"
	crm_resource --move --promoted -r db-clone -N "$node" >>"$(vm_log)" 2>&1
	if cl_until 300 cl_running_on "$node"; then
		crm_resource --clear -r db-clone >>"$(vm_log)" 2>&1
		tap_ok "$desc"
	else
		crm_resource --clear -r db-clone >>"$(vm_log)" 2>&1
		tap_not_ok "$desc"
		cl_diag
		return 1
	fi
}

# cl_first -- step 1: the clone promoted, the application writing; node1
# is the Promoted node from here on (a move when Pacemaker chose node2)
cl_first()
{
	local p

	if ! cl_until 300 cl_one_promoted; then
		tap_not_ok "db-clone is promoted on a node"
		cl_diag
		return 1
	fi
	p=$CL_P
	tap_ok "db-clone is promoted (on $p)"
	if [ "$p" != node1 ]; then
		cl_move "switchover: db-clone Promoted on node1, the application there" \
			node1 || return 1
	fi
	if tap_check "the application runs on node1, after the promotion" \
		cl_until 300 cl_running_on node1; then
		return 0
	fi
	cl_diag
	return 1
}

# cl_app_committed NODE -- the last committed transaction of NODE's
# application log (node2's read here, node1's through promstat)
cl_app_committed()
{
	if [ "$1" = node2 ]; then
		cl_last_committed "$CL_APPLOG"
	else
		cl_ask promstat >/dev/null &&
			cl_last_committed "$RESULTS/$VM_SUITE.applog.node1"
	fi
}

# cl_app_committed_ge NODE N -- NODE's application committed at least N
cl_app_committed_ge()
{
	[ "$(cl_app_committed "$1")" -ge "$2" ] 2>/dev/null
}

# cl_crash -- a: node1 crashes; node2 promoted, every acknowledged write
cl_crash()
{
	local acked counter n0

	# the application has written for a while (node1's log via promstat)
	vm_poll 60 2 "" cl_app_committed_ge node1 20 || true
	tap_diag "node1's application has committed $(cl_app_committed node1) transactions"
	n0=$(cl_ncounters node2)
	cl_ask crash
	acked=$(cat "$RESULTS/$VM_SUITE.acked" 2>/dev/null)
	if cl_until 180 cl_running_on node2; then
		tap_ok "a: after node1's crash Pacemaker promotes node2 (its copy acknowledged every write) and starts the application there"
		cl_until 120 cl_new_start node2 "$n0"
		counter=$(cl_counter "$CL_APPLOG")
		tap_diag "node1 logged transaction ${acked:-?} as its last acknowledged; node2's application found counter ${counter:-?}"
		cl_is "a: node2's application finds every transaction node1 acknowledged (counter >= last acknowledged)" \
			"$([ -n "$acked" ] && [ "${counter:-0}" -ge "$acked" ] && echo yes)" yes
		tap_check "a: node2's pool file is not torn (pobj_app check)" \
			sh -c "! grep -q torn '$CL_APPLOG'"
		cl_diag
		return 0
	fi
	tap_not_ok "a: after node1's crash Pacemaker promotes node2 (its copy acknowledged every write) and starts the application there"
	cl_diag
	return 1
}

# cl_switch -- c: a switchover to node2 and the failback to node1: the
# failback pulls only what differs into node1's (older) file
cl_switch()
{
	local k m line d n0

	cl_move "c: switchover (crm_resource --move): db-clone Promoted on node2, the application there" \
		node2 || return 1
	cl_until 120 sh -c "[ \"\$(sed -n 's/^committed //p' '$CL_APPLOG' | wc -l)\" -ge 10 ]"
	# node2's application stops, demote syncs its file to both copies,
	# node1 promotes its copy into its own (older) file
	n0=$(cl_ncounters node1)
	cl_move "c: failback (crm_resource --move): db-clone Promoted on node1 again, the application there" \
		node1 || return 1
	k=$(cl_last_committed "$CL_APPLOG")
	cl_until 120 cl_new_start node1 "$n0"
	cl_ask promstat
	m=$(cl_counter "$RESULTS/$VM_SUITE.applog.node1")
	tap_diag "node2 logged transaction ${k:-?} as its last committed; node1's application found counter ${m:-?}"
	cl_is "c: node1's application finds every transaction node2 committed" \
		"$([ -n "$k" ] && [ "${m:-0}" -ge "$k" ] && echo yes)" yes
	line=$(cat "$RESULTS/$VM_SUITE.promoted")
	echo "### node1's promotion: $line" >>"$(vm_log)"
	d=$(sed -n 's/.*: \([0-9]*\) of [0-9]* blocks differed.*/\1/p' <<<"$line")
	tap_diag "failback: node1's promote pulled ${d:-?} of $CL_POOL_BLOCKS blocks"
	cl_is "c: the failback pulled only the blocks that differ into node1's file (0 < blocks < 1/4 of the pool)" \
		"$([ -n "$d" ] && [ "$d" -gt 0 ] && [ "$d" -lt $((CL_POOL_BLOCKS / 4)) ] && echo yes)" yes
}

# cl_return -- node1 returns after its crash; node2's application, when
# it took over, resyncs node1's copy with only what it missed
cl_return()
{
	local w

	cl_ask revive
	if ! tap_check "node1 rejoins the cluster after its crash (crm_mon)" \
		cl_until 300 cl_online; then
		cl_diag
		return 1
	fi
	[ "$1" = yes ] || return 0
	if tap_check "a: node2's application resyncs node1's copy when it returns (resynced: ...)" \
		cl_until 120 grep -q "resynced: .* $TARGET_IP/ha/db again" \
			"$CL_APPERR"; then
		w=$(cl_written "$TARGET_IP")
		tap_diag "node1's rpmemd counted ${w:-?} bytes written for the resync (pool $((CL_POOL_BLOCKS << 16)))"
		cl_is "a: node1's copy is resynced, not copied whole (its rpmemd's bytes_written < the 16 MiB pool)" \
			"$([ -n "$w" ] && [ "$w" -lt $((CL_POOL_BLOCKS << 16)) ] && echo yes)" yes
		tap_check "a: node1, fenced while it was away, is unfenced once resynced (no rpmem-fence-db-clone-node1 constraint)" \
			cl_until 60 sh -c "! cibadmin --query --scope constraints --xpath \"//rsc_location[@id='rpmem-fence-db-clone-node1']\" >/dev/null 2>&1"
	fi
	cl_diag
}

# cl_recover -- no failover happened (a failed): the operator brings
# node1's pool file to its own copy, and Pacemaker promotes node1 again
cl_recover()
{
	local k m n0

	n0=$(cl_ncounters node1)
	cl_on node1 opsync
	if cl_until 300 cl_running_on node1; then
		tap_ok "after the operator's sync Pacemaker promotes node1 again and starts the application there"
	else
		tap_not_ok "after the operator's sync Pacemaker promotes node1 again and starts the application there"
		cl_diag
		return 1
	fi
	cl_until 120 cl_new_start node1 "$n0"
	m=$(cl_counter "$(cl_log_of node1)")
	k=$(cat "$RESULTS/$VM_SUITE.acked" 2>/dev/null)
	cl_is "node1's restarted application finds every transaction it acknowledged before its crash" \
		"$([ -n "$k" ] && [ "${m:-0}" -ge "$k" ] && echo yes)" yes
}

# cl_ready -- a Promoted node with its application: its name in CL_P
cl_ready()
{
	cl_one_promoted && cl_running_on "$CL_P"
}

# cl_nresynced P S -- how many times P's application resynced S's copy
# (its stderr as of the last cl_on P mon)
cl_nresynced()
{
	grep -c "resynced: .* $(cl_ip "$2")/ha/db again" \
		"$RESULTS/$VM_SUITE.apperr.$1" 2>/dev/null
}

# cl_resynced_more P S N -- P's application resynced S's copy after N
cl_resynced_more()
{
	cl_on "$1" mon >/dev/null
	[ "$(cl_nresynced "$1" "$2")" -gt "$3" ]
}

# cl_splitbrain -- d: a partition between the nodes (node2's eth0 drops
# everything). P stays Promoted in its view. S cannot tell P's loss from
# a crash: with resource-level fencing and no stonith it may be promoted
# too (P's fence constraint, placed in P's partition, cannot reach it).
# If it was: after the heal one node is Promoted, the split brain is
# refused (no copy overwritten) and reported on both nodes. If it was not
# (its copy still held open by P's dead connection): P's application
# resyncs S's copy after the heal, P alone Promoted.
cl_splitbrain()
{
	local p s r0 v

	if ! cl_ready; then
		tap_not_ok "d: partition: needs a Promoted node with its application (none)"
		return 1
	fi
	p=$CL_P s=$(cl_other "$CL_P")
	cl_on "$p" mon >/dev/null
	r0=$(cl_nresynced "$p" "$s")
	tap_check "d: partition: node2's eth0 drops every packet both ways (tc matchall)" \
		sh -c 'tc qdisc add dev eth0 clsact &&
		       tc filter add dev eth0 ingress matchall action drop &&
		       tc filter add dev eth0 egress matchall action drop'
	cl_on "$s" stalewatch
	v=$(cat "$RESULTS/$VM_SUITE.stale")
	tap_diag "d: during the partition $s was $v in its own partition (Pacemaker $(cat "$RESULTS/$VM_SUITE.tried") a promotion there)"
	cl_is "d: $p stays Promoted during the partition, its application running" \
		"$(cl_mon_of "$p" | grep -c "Promoted: \[ $p \]")" 1
	cl_req_heal
	if ! tap_check "d: after the heal both nodes are online again (crm_mon)" \
		cl_until 300 cl_online; then
		cl_diag
		return 1
	fi
	if [ "$v" = promoted ]; then
		tap_check "d: after the heal one node alone is Promoted (Pacemaker resolves the two primaries)" \
			cl_until 300 cl_one_promoted
		# each application tries to resync the other's copy: the
		# one written by the other side's promotion is refused
		cl_until 180 sh -c "cat '$CL_APPERR' /var/log/rpmemd.log 2>/dev/null | grep -qi 'split brain'"
		cl_on node1 sbcheck
		cl_on node2 sbcheck
		cl_is "d: the split brain is refused and reported on node1 (its rpmemd, application or agent)" \
			"$([ "$(cat "$RESULTS/$VM_SUITE.sb.node1" 2>/dev/null)" -gt 0 ] 2>/dev/null && echo yes)" yes
		cl_is "d: the split brain is refused and reported on node2 (its rpmemd, application or agent)" \
			"$([ "$(cat "$RESULTS/$VM_SUITE.sb.node2" 2>/dev/null)" -gt 0 ] 2>/dev/null && echo yes)" yes
		cl_diag
		return 0
	fi
	tap_check "d: after the heal $p's application resyncs $s's copy (resynced: ...)" \
		cl_until 180 cl_resynced_more "$p" "$s" "$r0"
	crm_resource --wait --timeout=240 >>"$(vm_log)" 2>&1
	cl_is "d: after the heal $p alone is Promoted" "$(cl_promoted)" "$p"
}

# cl_degraded P S -- P's application left S's copy behind (a degraded:
# line more than CL_DEG0)
cl_degraded()
{
	[ "$(cl_ndegraded "$1" "$2")" -gt "$CL_DEG0" ] ||
		{ cl_on "$1" mon >/dev/null; false; }
}

# cl_ndegraded P S -- how many degraded: lines P's application printed
# for S's copy (its stderr as of the last cl_on P mon)
cl_ndegraded()
{
	grep -c "degraded: .*$(cl_ip "$2")" "$RESULTS/$VM_SUITE.apperr.$1" 2>/dev/null
}

# cl_stale -- b: S's copy cut off, then P crashes: S is never promoted;
# P, back, is promoted with every acknowledged transaction
cl_stale()
{
	local p s n k m n0

	if ! cl_ready; then
		tap_not_ok "b: stale copy: needs a Promoted node with its application (none)"
		return 1
	fi
	p=$CL_P s=$(cl_other "$CL_P")
	cl_on "$p" mon
	CL_DEG0=$(cl_ndegraded "$p" "$s")
	cl_on "$s" cut
	if cl_until 240 cl_degraded "$p" "$s"; then
		tap_ok "b: $p's application goes on without $s's copy (degraded:)"
	else
		tap_not_ok "b: $p's application goes on without $s's copy (degraded:)"
	fi
	tap_check "b: $p's application fenced $s's copy first (constraint rpmem-fence-db-clone-$s in the CIB)" \
		cl_until 60 cl_fenced "$s"
	n=$(cl_last_committed "$(cl_log_of "$p")")
	cl_until 120 cl_committed_ge "$p" $((${n:-0} + 10))
	tap_diag "$p committed ${n:-?} when $s's copy fell behind, $(cl_last_committed "$(cl_log_of "$p")") before its crash"
	cl_on "$p" crash
	k=$(cat "$RESULTS/$VM_SUITE.acked" 2>/dev/null)
	cl_on "$s" heal
	cl_on "$s" stalewatch
	cl_is "b: the stale copy on $s (cut off, then the primary crashed) is never promoted" \
		"$(cat "$RESULTS/$VM_SUITE.stale")" not-promoted
	cl_is "b: Pacemaker does not try to promote it (the agent gives the stale copy no promotion score)" \
		"$(cat "$RESULTS/$VM_SUITE.tried")" untried
	n0=$(cl_ncounters "$p")
	cl_on "$p" revive
	if cl_until 300 cl_running_on "$p"; then
		tap_ok "b: $p, back, is promoted again and its application runs"
		cl_until 120 cl_new_start "$p" "$n0"
		m=$(cl_counter "$(cl_log_of "$p")")
		cl_is "b: $p's application finds every transaction it acknowledged (counter ${m:-?} >= ${k:-?})" \
			"$([ -n "$k" ] && [ "${m:-0}" -ge "$k" ] && echo yes)" yes
	else
		tap_not_ok "b: $p, back, is promoted again and its application runs"
		cl_diag
	fi
}

initiator_main()
{
	local failed_over=no

	rm -rf "$CL_DIR"
	mkdir -p "$CL_DIR"
	export PATH=$RPMEM_BUILD:$PATH
	if ! tap_check "node2: install (overlays, user rpmemd, the agent)" \
		cl_install; then
		return
	fi
	if ! vm_wait key 300; then
		tap_not_ok "node1 made no key"
		cl_uninstall
		return
	fi
	mkdir -p /etc/rpmem
	install -m 600 "$RESULTS/$VM_SUITE.psk" /etc/rpmem/ha.psk
	cl_setup_node || { cl_uninstall; return; }
	vm_signal rpmemd-up
	if ! vm_wait corosync 300; then
		tap_not_ok "node1 wrote no corosync.conf"
		cl_uninstall
		return
	fi
	install -m 644 "$RESULTS/corosync.conf" /etc/corosync/corosync.conf
	install -m 400 "$RESULTS/authkey" /etc/corosync/authkey
	cl_run start-nosystemd
	vm_signal started
	if vm_wait resources 600 && cl_first; then
		cl_part c && cl_switch
		if cl_part a; then
			cl_crash && failed_over=yes
			cl_return "$failed_over" &&
				{ [ "$failed_over" = yes ] || cl_recover; }
		fi
		cl_part b && cl_stale
		cl_part d && cl_splitbrain
	fi
	cl_diag
	cp "$CL_PCMKLOG" "$RESULTS/$VM_SUITE.pacemaker.node2.log" 2>/dev/null
	for p in $(pgrep -x pobj_app) $(pgrep -x pacemakerd) \
		 $(pgrep '^pacemaker-') $(pgrep -x corosync) $(pgrep -x rpmemd); do
		kill -KILL "$p" 2>/dev/null
	done
	cl_uninstall
}
