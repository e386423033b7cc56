"""`osworld env doctor` names what is missing and the command that installs it."""
from desktop_env.providers.local import doctor


def test_package_list_covers_the_suite_apps():
    packages = doctor.required_packages()
    for name in ("bubblewrap", "xvfb", "python3-pyatspi", "libreoffice-calc", "gimp", "vlc", "thunderbird", "chromium"):
        assert name in packages


def test_a_missing_package_is_reported_with_its_install_command(monkeypatch):
    monkeypatch.setattr(doctor, "required_packages", lambda: ["bash", "osworld-no-such-package"])
    (packages, *_) = doctor.run_checks()
    assert not packages.ok
    assert "osworld-no-such-package" in packages.detail
    assert packages.fix == "apt-get install --no-install-recommends osworld-no-such-package"


def test_doctor_says_which_system_desktops_boot_from_and_refuses_an_unknown_one(monkeypatch):
    monkeypatch.setenv("OSWORLD_DESKTOP_SYSTEM", "host")
    host = doctor.check_desktop_system()
    assert host.ok and "the host's packages" in host.detail and "OSWORLD_DESKTOP_SYSTEM=host" in host.detail
    monkeypatch.setenv("OSWORLD_DESKTOP_SYSTEM", "bogus")
    unknown = doctor.check_desktop_system()
    assert not unknown.ok and unknown.required and "'bogus'" in unknown.detail
