#!/usr/bin/env bash
# check-includes.sh - enforce the include rules of docs/architecture.md
# on every C file.
#
#  - proto/ includes nothing else of ours;
#  - store/ and sandbox/ include only proto's utilities (not the messages);
#  - workers/ and tools/ never include store/ or broker/;
#  - client/ includes only proto/;
#  - only proto/ includes zmq.h and msgpack.h, only store/ lmdb.h, only
#    sandbox/ seccomp.h, only workers/model/ curl/curl.h.
# tests/ may include anything.  Prints each breach; exits 1 if any.
set -u
cd "$(dirname "$0")/.." || exit 2
bad=0
breach() {
	echo "include rule: $1"
	bad=1
}
# proto headers that carry messages rather than utilities.
msg_headers='^proto/(msg|wire|frame|catalog|zsock)'
while IFS= read -r f; do
	dir=${f%%/*}
	case "$dir" in tests) continue ;; esac
	while IFS= read -r inc; do
		case "$inc" in
		'<'*)
			h=${inc#<}; h=${h%>}
			case "$h" in
			zmq.h|msgpack.h|msgpack/*)
				[ "$dir" = proto ] || breach "$f includes <$h> (only proto/ may)" ;;
			lmdb.h)
				[ "$dir" = store ] || breach "$f includes <$h> (only store/ may)" ;;
			seccomp.h)
				[ "$dir" = sandbox ] || breach "$f includes <$h> (only sandbox/ may)" ;;
			curl/*)
				case "$f" in workers/model/*) ;; *) breach "$f includes <$h> (only workers/model/ may)" ;; esac ;;
			esac
			;;
		'"'*)
			h=${inc#\"}; h=${h%\"}
			case "$h" in */*) ;; *) continue ;; esac # same directory
			top=${h%%/*}
			[ "$top" = "$dir" ] && continue # its own module
			case "$dir" in
			proto)
				[ "$top" = proto ] || breach "$f includes \"$h\" (proto/ includes nothing else of ours)" ;;
			store|sandbox)
				if [ "$top" != proto ] || [[ "$h" =~ $msg_headers ]]; then
					breach "$f includes \"$h\" ($dir/ may include only proto's utilities)"
				fi ;;
			workers|tools)
				case "$top" in store|broker) breach "$f includes \"$h\" ($dir/ never includes store/ or broker/)" ;; esac ;;
			client)
				[ "$top" = proto ] || breach "$f includes \"$h\" (client/ includes only proto/)" ;;
			esac
			;;
		esac
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p' "$f")
done < <(git ls-files '*.c' '*.h' 2>/dev/null; git ls-files --others --exclude-standard '*.c' '*.h' 2>/dev/null)
exit $bad
