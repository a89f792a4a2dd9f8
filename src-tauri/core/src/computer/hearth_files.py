#!/usr/bin/python3 -I
"""hearth-files: the workspace's file helper, baked into the computer image.

Hearth runs it with an argv (never a shell), as uid 1000:
    hearth-files list  PATH
    hearth-files read  PATH MAX_BYTES          (a regular file; bytes, base64 in the answer)
    hearth-files write PATH MAX_BYTES LENGTH SHA256
                                               (the content on stdin; temp file, fsync, rename —
                                               only if exactly LENGTH bytes with that SHA-256 came)
    hearth-files mkdir PATH                    (mode 0700)
and reads one JSON object from stdout: {"ok": true, ...} or {"ok": false, "code", "error"}.

Hearth checks every path before sending it; this checks it again, and opens every component
with O_NOFOLLOW relative to the one before (openat), so a symlink made inside the workspace
cannot lead out of it, and a path cannot be swapped between a check and the open.
"""

import base64
import hashlib
import json
import secrets
import os
import stat
import sys

ROOT = "/workspace"
MAX_PATH_CHARS = 2048
MAX_ENTRIES = 1000
HARD_MAX_BYTES = 10 * 1024 * 1024
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Refused(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def answer(value):
    sys.stdout.write(json.dumps(value))
    sys.stdout.flush()


def parts_of(path):
    if len(path) == 0 or len(path) > MAX_PATH_CHARS:
        raise Refused("bad_path", "the path must be 1 to %d characters" % MAX_PATH_CHARS)
    if "\0" in path or not path.startswith("/"):
        raise Refused("bad_path", "the path must be absolute, inside /workspace")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Refused("bad_path", "the path must not contain ..")
    if not parts or parts[0] != "workspace":
        raise Refused("bad_path", "the path must be inside /workspace")
    return parts[1:]


def open_dir(parts):
    """The directory `parts` names under /workspace, each component opened with O_NOFOLLOW."""
    fd = os.open(ROOT, DIR_FLAGS)
    try:
        for part in parts:
            try:
                child = os.open(part, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                raise Refused("not_found", "%s does not exist" % part)
            except PermissionError:
                raise Refused("permission", "%s cannot be opened (permission denied)" % part)
            except OSError as err:
                # ELOOP: a symlink; ENOTDIR: a file where a folder was named.
                raise Refused("not_a_directory", "%s is not a folder (symlinks are not followed): %s" % (part, err.strerror))
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def kind_of(mode):
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"


def printable(name):
    """A name as UTF-8 text: bytes that are not UTF-8 show as U+FFFD (JSON cannot carry them)."""
    return os.fsencode(name).decode("utf-8", "replace")


def do_list(path):
    fd = open_dir(parts_of(path))
    try:
        entries = []
        with os.scandir(fd) as it:
            for entry in it:
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue  # removed while listed
                entries.append({"name": printable(entry.name), "kind": kind_of(st.st_mode), "bytes": st.st_size})
                if len(entries) > 100 * MAX_ENTRIES:
                    break
    finally:
        os.close(fd)
    # Sorted before the cut, so folders are never the ones left out.
    entries.sort(key=lambda e: (e["kind"] != "directory", e["name"]))
    return {"ok": True, "entries": entries[:MAX_ENTRIES], "truncated": len(entries) > MAX_ENTRIES}


def split_leaf(path):
    parts = parts_of(path)
    if not parts:
        raise Refused("bad_path", "name a file inside /workspace, not /workspace itself")
    return parts[:-1], parts[-1]


def do_read(path, max_bytes):
    folders, name = split_leaf(path)
    dfd = open_dir(folders)
    try:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
        except FileNotFoundError:
            raise Refused("not_found", "%s does not exist" % name)
        except OSError as err:
            raise Refused("not_regular", "%s is not a regular file (symlinks are not followed): %s" % (name, err.strerror))
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not_regular", "%s is not a regular file" % name)
        if st.st_size > max_bytes:
            raise Refused("too_large", "%s has %d bytes; at most %d can be read" % (name, st.st_size, max_bytes))
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise Refused("too_large", "%s grew past %d bytes while it was read" % (name, max_bytes))
            chunks.append(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return {"ok": True, "base64": base64.b64encode(data).decode("ascii"), "bytes": len(data)}


def do_write(path, max_bytes, length, digest):
    folders, name = split_leaf(path)
    if length > max_bytes:
        raise Refused("too_large", "the content is over %d bytes" % max_bytes)
    data = sys.stdin.buffer.read(length + 1)
    if len(data) != length or hashlib.sha256(data).hexdigest() != digest:
        # Input cut short (Stop, a lost connection) or not what Hearth sent: nothing changes.
        raise Refused("incomplete", "the content did not arrive whole; nothing was written")
    dfd = open_dir(folders)
    temp = ".hearth-%s.tmp" % secrets.token_hex(8)
    created = False
    try:
        try:
            existing = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            if not stat.S_ISREG(existing.st_mode):
                raise Refused("not_regular", "%s exists and is not a regular file; it is never replaced" % name)
        except FileNotFoundError:
            pass
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        created = True
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        created = False
        try:
            os.fsync(dfd)
        except OSError:
            pass  # the file is replaced; only the folder's durability is in doubt

    except BaseException:
        if created:
            try:
                os.unlink(temp, dir_fd=dfd)
            except OSError:
                pass
        raise
    finally:
        os.close(dfd)
    return {"ok": True, "bytes": len(data)}


def do_mkdir(path):
    folders, name = split_leaf(path)
    dfd = open_dir(folders)
    try:
        try:
            os.mkdir(name, 0o700, dir_fd=dfd)
            created = True
        except FileExistsError:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                raise Refused("exists", "%s exists and is not a folder" % name)
            created = False
    finally:
        os.close(dfd)
    return {"ok": True, "created": created}


def limit(text):
    try:
        value = int(text)
    except ValueError:
        raise Refused("usage", "MAX_BYTES must be a number")
    if value < 0 or value > HARD_MAX_BYTES:
        raise Refused("usage", "MAX_BYTES must be 0 to %d" % HARD_MAX_BYTES)
    return value


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "list":
            answer(do_list(argv[2]))
        elif len(argv) == 4 and argv[1] == "read":
            answer(do_read(argv[2], limit(argv[3])))
        elif len(argv) == 6 and argv[1] == "write":
            answer(do_write(argv[2], limit(argv[3]), limit(argv[4]), argv[5]))
        elif len(argv) == 3 and argv[1] == "mkdir":
            answer(do_mkdir(argv[2]))
        else:
            raise Refused("usage", "usage: hearth-files list PATH | read PATH MAX | write PATH MAX LENGTH SHA256 | mkdir PATH")
    except Refused as err:
        answer({"ok": False, "code": err.code, "error": str(err)})
        return 2
    except OSError as err:
        answer({"ok": False, "code": "os_error", "error": err.strerror or str(err)})
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
