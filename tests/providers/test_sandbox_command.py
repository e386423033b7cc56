"""The bubblewrap command line isolates what the design says it isolates."""
from pathlib import Path

from desktop_env.providers.local.boot.sandbox import (
    ROOT_CAPABILITIES,
    SANDBOX_HOME,
    SandboxSpec,
    bwrap_argv,
    bwrap_environment,
    sandbox_env,
)


def spec(tmp_path: Path, network: bool = False, **options) -> SandboxSpec:
    return SandboxSpec(env_dir=tmp_path, src_dir=tmp_path / "src", venv_dir=tmp_path / "venv",
                       desktop_dir=tmp_path / "desktop", network=network,
                       home_template=tmp_path / "template", **options)


def pairs(argv: list[str], flag: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == flag]


def test_mounts_are_an_allow_list_never_the_hosts_root(tmp_path):
    argv = bwrap_argv(spec(tmp_path), ["true"])
    sources = {source for source, _ in pairs(argv, "--ro-bind") + pairs(argv, "--bind")}
    assert "/" not in sources and "/etc" not in sources and "/var" not in sources
    assert ("/usr", "/usr") in pairs(argv, "--ro-bind")
    for private in ("/root", "/home", "/opt", "/srv", "/work", "/var/lib", "/etc/shadow", "/etc/environment",
                    "/etc/profile.d", "/etc/sudoers", "/etc/ssh"):
        assert private not in sources, private
    assert pairs(argv, "--bind") == []  # nothing of the host's disk is writable inside
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--remount-ro"] == ["/", "/dev"]
    assert argv[-2:] == ["--", "true"]


def test_only_the_env_servers_own_code_and_venv_are_mounted(tmp_path):
    argv = bwrap_argv(spec(tmp_path), ["true"])
    assert (str(tmp_path / "src"), "/run/osworld-lib/src") in pairs(argv, "--ro-bind")
    assert (str(tmp_path / "venv"), "/run/osworld-lib/venv") in pairs(argv, "--ro-bind")


def test_every_tmpfs_has_a_size_cap_and_the_home_its_own(tmp_path):
    argv = bwrap_argv(spec(tmp_path, tmpfs_bytes=12345, disk_bytes=67890), ["true"])
    tmpfs = [i for i, a in enumerate(argv) if a == "--tmpfs"]
    capped = {argv[i + 1] for i in tmpfs if argv[i - 2:i] == ["--size", "12345"]}
    assert {"/tmp", "/dev/shm", "/run", "/var/tmp"} <= capped
    assert {argv[i + 1] for i in tmpfs if argv[i - 2:i] == ["--size", "67890"]} == {SANDBOX_HOME}
    assert all(argv[i + 1] in ("/usr/local", SANDBOX_HOME) or argv[i + 1] in capped for i in tmpfs)


def test_namespaces_and_lifetime(tmp_path):
    argv = bwrap_argv(spec(tmp_path), ["true"])
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--die-with-parent",
                 "--clearenv"):
        assert flag in argv
    assert argv[argv.index("--uid") + 1] == "1000"


def test_bwrap_itself_starts_with_an_empty_environment_and_the_session_with_a_listed_one(tmp_path):
    assert bwrap_environment() == {"PATH": "/usr/bin:/bin"}
    argv = bwrap_argv(spec(tmp_path), ["true"])
    names = {name for name, _ in pairs(argv, "--setenv")}
    assert names == set(sandbox_env(spec(tmp_path)))
    assert not any("KEY" in name or "TOKEN" in name for name in names)


def test_network_is_shared_only_when_asked(tmp_path):
    assert "--unshare-net" not in bwrap_argv(spec(tmp_path, network=True), ["true"])


def test_each_boot_gets_its_own_session_config_read_only_and_the_home_from_the_template(tmp_path):
    (tmp_path / "run-3").mkdir()
    (tmp_path / "run-3" / "session.json").write_text("{}")
    argv = bwrap_argv(spec(tmp_path, generation=3), ["true"])
    binds = pairs(argv, "--ro-bind")
    assert (str(tmp_path / "run-3" / "session.json"), "/run/osworld/session.json") in binds
    assert (str(tmp_path / "template"), "/run/osworld-lib/home-template") in binds
    assert str(tmp_path / "sockets") not in argv  # the listening sockets' folder is the harness's alone


def test_a_desktop_with_its_own_root_joins_the_harness_namespace_with_a_short_capability_list(tmp_path):
    rooted = spec(tmp_path, userns_fd=7)
    argv = bwrap_argv(rooted, ["true"])
    assert argv[argv.index("--userns") + 1] == "7" and "--unshare-user" not in argv
    assert argv[argv.index("--uid") + 1] == "0"
    caps = {argv[i + 1] for i, a in enumerate(argv) if a == "--cap-add"}
    assert caps == set(ROOT_CAPABILITIES) | {"CAP_SYS_ADMIN"}
    for never in ("CAP_SYS_MODULE", "CAP_SYS_PTRACE", "CAP_NET_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_RAWIO", "ALL"):
        assert never not in caps
    # the system comes from the staged (idmapped) trees and the desktop's own /etc, never the host's folders
    binds = pairs(argv, "--ro-bind")
    assert (str(tmp_path / "system" / "usr"), "/usr") in binds and (str(tmp_path / "system" / "etc"), "/etc") in binds
    sources = {source for source, _ in binds + pairs(argv, "--bind")}
    assert not {"/usr", "/etc", "/", "/var/lib/dpkg"} & sources
    assert not any(target.startswith("/etc/") and target != "/etc/machine-id" for _, target in binds)
    assert argv[argv.index("--remount-ro") + 1] == "/"
