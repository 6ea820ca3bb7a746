#!/bin/sh
# Applies DESIGN.md section 5 modes after `meson install`.  Run by meson
# with MESON_INSTALL_DESTDIR_PREFIX / DESTDIR set.
#  - Installing into a root that has /etc/group (DESTDIR empty, or a
#    chroot-like DESTDIR): create the two groups there if missing, then set
#    groups and modes.
#  - Installing into a bare staging directory (packaging): set the modes we
#    can and leave group ownership to the package's postinst.
set -eu

# `post-install.sh --setuid FILE`: added by src/admin/meson.build only for a build
# option that asks for it (setuid_chfn, setuid_gpasswd), which also installs
# the self-service program (chfn-setuid.c, gpasswd-setuid.c) under the usual
# name.  Without the option nothing calls this and the root tool stays
# plain 0755.  The bit is set only when we can
# make the file root's: setuid to a builder's uid would be a gift to every
# caller.  The package's postinst runs: chown root:root FILE && chmod 4755 FILE
if [ "${1:-}" = --setuid ]; then
  p="${DESTDIR:-}$2"
  if [ "$(id -u)" = 0 ]; then
    chown root:root "$p"
    chmod 4755 "$p"
  else
    chmod 0755 "$p"
    echo "post-install: $2 installed without its setuid bit (not installing as root)" >&2
  fi
  exit 0
fi

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
# Without the group (staging install) the setgid bit is NOT set: setgid to
# whatever group the file happens to have (root) would be a gift to every
# caller.  The package's postinst runs:
#   chown root:hardened-shadow FILE && chmod 2711 FILE
# passwd and chage also get the file capability cap_audit_write (permitted
# only: the program raises it for each send), so that a user's own password
# change reaches the audit log; after chown, which clears it.  Without
# setcap (libcap2-bin) they work, and the kernel refuses a user's events.
for f in "$libexecdir/shell-helper" "$libexecdir/password-helper" "$bindir/passwd" "$bindir/chage" "$bindir/chsh"; do
  p="$root$f"
  [ -e "$p" ] || continue
  if [ -n "$tree_gid" ]; then
    chown "root:$tree_gid" "$p"
    chmod 2711 "$p"
    case $f in
    */passwd|*/chage)
      if ! setcap cap_audit_write=p "$p" 2>/dev/null; then
        echo "post-install: $f installed without cap_audit_write (setcap failed or missing): a user's own changes are not audited" >&2
      fi ;;
    esac
  else
    chmod 0755 "$p"
    echo "post-install: $f installed without its setgid bit (no group hardened-shadow here)" >&2
  fi
done
# setuid root, 4755 (DESIGN §5): newgrp, sg, newuidmap, newgidmap.  The bit is set only when we can make the file root's: setuid
# to a builder's uid would be a gift to every caller.  A staging install as
# another user leaves them 0755; the package's postinst runs:
#   chown root:root FILE && chmod 4755 FILE
for f in "$bindir/newgrp" "$bindir/sg" "$bindir/newuidmap" "$bindir/newgidmap"; do
  p="$root$f"
  if [ ! -f "$p" ] || [ -L "$p" ]; then continue; fi
  if [ "$(id -u)" = 0 ]; then
    chown root:root "$p"
    chmod 4755 "$p"
  else
    chmod 0755 "$p"
    echo "post-install: $f installed without its setuid bit (not installing as root)" >&2
  fi
done
# su: setuid root, 4755, on the same terms as newgrp above.
p="$root$bindir/su"
if [ -f "$p" ] && [ ! -L "$p" ]; then
  if [ "$(id -u)" = 0 ]; then
    chown root:root "$p"
    chmod 4755 "$p"
  else
    chmod 0755 "$p"
    echo "post-install: $bindir/su installed without its setuid bit (not installing as root)" >&2
  fi
fi
# login and runuser: run by root only (they refuse anyone else); plain 0755
for f in "$bindir/login" "$sbindir/runuser"; do
  p="$root$f"
  if [ -f "$p" ]; then chmod 0755 "$p"; fi
done
# nologin: the shell of refused accounts, run by them; plain 0755
if [ -f "$root$sbindir/nologin" ]; then chmod 0755 "$root$sbindir/nologin"; fi
# plain root tools: readable by nobody but root is pointless; 0755 like shadow-utils
for f in "$sbindir/pwconv" "$sbindir/pwunconv" "$libexecdir/shell-proxy"; do
  p="$root$f"
  [ -e "$p" ] && chmod 0755 "$p"
done
exit 0
