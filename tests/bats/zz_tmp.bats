load helpers
@test x {
	setup_env; mkfile "$W/src" 2; start_daemon
	"$RPMEMCTL" events --now --json --count 8 --timeout 5 "$T" > $W/ev &
	sleep 0.5
	"$RPMEMCTL" mirror "$W/src" "$T/r1/p1"
	wait
	grep '"session"' $W/ev | grep destroy >&3 || true
	stop_daemon
}
