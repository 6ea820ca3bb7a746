#!/bin/sh
# Applies DESIGN.md section 5 modes after `meson install`.  Run by meson
# with MESON_INSTALL_DESTDIR_PREFIX / DESTDIR set.
#  - Installing into a root that has /etc/group (DESTDIR empty, or a
#    chroot-like DESTDIR): create the two groups there if missing, then set
#    groups and modes.
#  - Installing into a bare staging directory (packaging): set the modes we
#    can and leave group ownership to the package's postinst.
set -eu
libexecdir=$1 bindir=$2 sbindir=$3
root=${DESTDIR:-}
groupfile="$root/etc/group"

gid_of() { awk -F: -v g="$1" '$1 == g { print $3; found=1 } END { exit !found }' "$groupfile"; }

if [ -f "$groupfile" ]; then
  for g in hardened-shadow hardened-shadow-auth; do
    if ! gid_of "$g" >/dev/null; then
      if [ -z "$root" ]; then
        groupadd --system "$g"
      else
        groupadd --system --prefix "$root" "$g"
      fi
      echo "post-install: created group $g"
    fi
  done
  tree_gid=$(gid_of hardened-shadow)
else
  tree_gid=
  echo "post-install: $groupfile missing: group ownership left to the package's postinst" >&2
fi

# setgid hardened-shadow, 2711: reach the caller's own directory only.
for f in "$libexecdir/shell-helper"; do
  p="$root$f"
  [ -e "$p" ] || continue
  if [ -n "$tree_gid" ]; then chown "root:$tree_gid" "$p"; fi
  chmod 2711 "$p"
done
# plain root tools: readable by nobody but root is pointless; 0755 like shadow-utils
for f in "$sbindir/pwconv" "$sbindir/pwunconv" "$libexecdir/shell-proxy"; do
  p="$root$f"
  [ -e "$p" ] && chmod 0755 "$p"
done
exit 0
