"""Generates the Thunderbird tasks' input and expected files (deterministic).

Every task starts Thunderbird on a ready profile: profiles.ini + installs.ini (so Thunderbird
picks this profile, not a new one), prefs.js with a POP3 account (never contacted: no check at
startup), Local Folders, and the first-run screens off, and mbox folders written the way
Thunderbird writes them (X-Mozilla-Status headers, so it can flag moved/deleted messages in
place). Run: python3 make_files.py
"""
from __future__ import annotations

import datetime
import email.utils
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROFILE = "osworld.default"
ACCOUNT_DIR = "pop.northwind.example"
ME = "Jordan Miles <jordan.miles@northwind.example>"

# Thunderbird's install hash for /usr/lib/thunderbird: with it, this profile is the install's
# default and Thunderbird does not make a dedicated profile of its own.
INSTALL_HASH = "FDC34C9F024745EB"

PROFILES_INI = f"""[Profile0]
Name=default
IsRelative=1
Path={PROFILE}
Default=1

[General]
StartWithLastProfile=1
Version=2

[Install{INSTALL_HASH}]
Default={PROFILE}
Locked=1
"""

INSTALLS_INI = f"""[{INSTALL_HASH}]
Default={PROFILE}
Locked=1
"""

PREFS = {
    # accounts: a POP3 account that never connects, and Local Folders
    "mail.accountmanager.accounts": "account1,account2",
    "mail.accountmanager.defaultaccount": "account1",
    "mail.accountmanager.localfoldersserver": "server2",
    "mail.account.account1.identities": "id1",
    "mail.account.account1.server": "server1",
    "mail.account.account2.server": "server2",
    "mail.identity.id1.fullName": "Jordan Miles",
    "mail.identity.id1.useremail": "jordan.miles@northwind.example",
    "mail.identity.id1.smtpServer": "smtp1",
    "mail.identity.id1.valid": True,
    "mail.identity.id1.fcc_folder": f"mailbox://jordan.miles@{ACCOUNT_DIR}/Sent",
    "mail.identity.id1.draft_folder": f"mailbox://jordan.miles@{ACCOUNT_DIR}/Drafts",
    "mail.identity.id1.stationery_folder": f"mailbox://jordan.miles@{ACCOUNT_DIR}/Templates",
    "mail.server.server1.directory-rel": f"[ProfD]Mail/{ACCOUNT_DIR}",
    "mail.server.server1.hostname": ACCOUNT_DIR,
    "mail.server.server1.name": "jordan.miles@northwind.example",
    "mail.server.server1.type": "pop3",
    "mail.server.server1.userName": "jordan.miles",
    "mail.server.server1.port": 995,
    "mail.server.server1.socketType": 3,
    "mail.server.server1.login_at_startup": False,
    "mail.server.server1.check_new_mail": False,
    "mail.server.server1.download_on_biff": False,
    "mail.server.server2.directory-rel": "[ProfD]Mail/Local Folders",
    "mail.server.server2.hostname": "Local Folders",
    "mail.server.server2.name": "Local Folders",
    "mail.server.server2.type": "none",
    "mail.server.server2.userName": "nobody",
    "mail.smtpserver.smtp1.hostname": "smtp.northwind.example",
    "mail.smtpserver.smtp1.username": "jordan.miles",
    "mail.smtpserver.smtp1.port": 465,
    "mail.smtpserver.smtp1.try_ssl": 3,
    "mail.smtpservers": "smtp1",
    "mail.smtp.defaultserver": "smtp1",
    # no first-run account hub, default-client prompt, rights bar, start page, telemetry notice
    "mail.provider.suppress_dialog_on_startup": True,
    "mail.shell.checkDefaultClient": False,
    "mail.rights.override": True,
    "mailnews.start_page.enabled": False,
    "mail.inappnotifications.enabled": False,
    "datareporting.policy.dataSubmissionPolicyBypassNotification": True,
    "datareporting.healthreport.uploadEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.auto": False,
    "mail.biff.play_sound": False,
    # the donation appeal of Thunderbird 115 (app.donation.eoy.version 5, "spring24") already seen, as the VM's
    # profiles have it: otherwise the first start opens the appeal in the default browser, over the task's window
    "app.donation.eoy.version.viewed": 5,
}


def prefs_js(prefs: dict) -> str:
    lines = ["// Mozilla User Preferences", ""]
    lines += [f"user_pref({json.dumps(k)}, {json.dumps(v)});" for k, v in sorted(prefs.items())]
    return "\n".join(lines) + "\n"


# -- mail ------------------------------------------------------------------------------------------

# (day in Nov 2026, hh:mm, from, subject, body, read)
INBOX = [
    (2, "08:41", "IT Helpdesk <helpdesk@northwind.example>", "Scheduled maintenance this weekend",
     "Hello all,\n\nThe file server will be offline on Saturday from 06:00 to 10:00 for updates.\n\nIT Helpdesk", True),
    (3, "09:12", "Priya Raman <priya.raman@northwind.example>", "Q4 planning meeting moved to Thursday",
     "Hi Jordan,\n\nThe Q4 planning meeting is now on Thursday at 14:00 in room 3B.\n\nPriya", True),
    (4, "07:30", "City Weekly <newsletter@cityweekly.example>", "City Weekly Digest: new bike lanes downtown",
     "This week: the council approved 4 km of new bike lanes on Harbour Street.\n\nRead more on our website.", True),
    (5, "18:02", "Pages & Co <orders@pagesandco.example>", "Your order #48213 has shipped",
     "Good news! Your order #48213 (2 items) is on its way.\nTracking number: PC48213-77\n\nPages & Co", True),
    (6, "10:15", "Tom Becker <tom.becker@northwind.example>", "Re: laptop replacement",
     "Jordan,\n\nYour new laptop arrives on Tuesday; bring the old one to IT by Friday.\n\nTom", True),
    (7, "12:47", "Marco Rossi <marco.rossi@mailbox.example>", "Dinner on Saturday?",
     "Hey! Are you free for dinner on Saturday around 19:30? The new Lebanese place opened.\n\nMarco", False),
    (9, "08:05", "Pages & Co <orders@pagesandco.example>", "Receipt for order #48213",
     "Thank you for shopping with Pages & Co.\n\nOrder #48213\nTotal: 38.90 EUR\nPaid by card ending 4417.", True),
    (11, "07:30", "City Weekly <newsletter@cityweekly.example>", "City Weekly Digest: farmers market returns",
     "This week: the farmers market returns to Linden Square every Sunday morning.", False),
    (12, "16:20", "Riverside Clinic <appointments@riversideclinic.example>", "Appointment reminder: 24 November",
     "Dear Jordan Miles,\n\nThis is a reminder of your appointment on 24 November at 09:30.\n\n"
     "Riverside Clinic", False),
    (14, "11:03", "Priya Raman <priya.raman@northwind.example>", "Slides for Monday",
     "Hi Jordan,\n\nCould you send me the updated slides for Monday's review?\n\nThanks,\nPriya", False),
    (16, "19:44", "Pages & Co <orders@pagesandco.example>", "Your order #48377 has shipped",
     "Good news! Your order #48377 (1 item) is on its way.\nTracking number: PC48377-12\n\nPages & Co", False),
    (18, "07:30", "City Weekly <newsletter@cityweekly.example>", "City Weekly Digest: library opening hours",
     "This week: the central library extends its opening hours to 21:00 on weekdays.", False),
]

SENT = [
    (19, "17:25", ME, "Re: Slides for Monday",
     "Hi Priya,\n\nHere are the slides; the budget numbers are still the old ones.\n\nJordan", True,
     "Priya Raman <priya.raman@northwind.example>"),
]

KEYS_PADDING = " " * 80  # Thunderbird reserves room for tags in X-Mozilla-Keys


def _message(index: int, day: int, hhmm: str, sender: str, subject: str, body: str, read: bool,
             to: str = ME) -> str:
    hour, minute = map(int, hhmm.split(":"))
    when = datetime.datetime(2026, 11, day, hour, minute, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    address = email.utils.parseaddr(sender)[1]
    return "".join([
        f"From - {when.strftime('%a %b %d %H:%M:%S %Y')}\n",
        f"X-Mozilla-Status: {'0001' if read else '0000'}\n",
        "X-Mozilla-Status2: 00000000\n",
        f"X-Mozilla-Keys: {KEYS_PADDING}\n",
        f"Return-Path: <{address}>\n",
        f"Message-ID: <{2026110000 + index * 7919}.{address.split('@')[0]}@{address.split('@')[1]}>\n",
        f"Date: {email.utils.format_datetime(when)}\n",
        f"From: {sender}\n",
        f"To: {to}\n",
        f"Subject: {subject}\n",
        "MIME-Version: 1.0\n",
        "Content-Type: text/plain; charset=UTF-8; format=flowed\n",
        "Content-Transfer-Encoding: 7bit\n",
        "\n",
        body, "\n\n",
    ])


def mbox(entries: list[tuple], first_index: int = 0) -> str:
    return "".join(_message(first_index + i, *entry) for i, entry in enumerate(entries))


def inbox_messages(keep=lambda entry: True) -> str:
    """The Inbox, or the part of it `keep` selects, each message with its original number."""
    return "".join(_message(i, *entry) for i, entry in enumerate(INBOX) if keep(entry))


# -- window and folder-pane state: maximized, account expanded, Inbox selected ------------------

XULSTORE = {"chrome://messenger/content/messenger.xhtml": {
    "messengerWindow": {"screenX": "0", "screenY": "29", "width": "1920", "height": "1051", "sizemode": "maximized"},
    "folderTree": {"mode": "all"},
    "quickFilterBar": {"visible": "false"},
    "messagepaneboxwrapper": {"collapsed": "false"},
    "spacesToolbar": {"hidden": "false"},
}}
FOLDER_TREE = {"open": {"all": [f"mailbox://jordan.miles@{ACCOUNT_DIR}"]}}
SESSION = {"rev": 0, "windows": [{"type": "3pane", "tabs": {"rev": 0, "selectedIndex": 0, "tabs": [
    {"mode": "mail3PaneTab", "state": {"firstTab": True, "folderPaneVisible": True,
                                       "folderURI": f"mailbox://jordan.miles@{ACCOUNT_DIR}/Inbox",
                                       "messagePaneVisible": True}, "ext": {}}]}}]}


def profile_files() -> dict[str, str]:
    """{path under ~/.thunderbird: text} of the profile every task starts from."""
    mail = f"{PROFILE}/Mail/{ACCOUNT_DIR}"
    return {
        "profiles.ini": PROFILES_INI,
        "installs.ini": INSTALLS_INI,
        f"{PROFILE}/prefs.js": prefs_js(PREFS),
        f"{PROFILE}/xulstore.json": json.dumps(XULSTORE),
        f"{PROFILE}/folderTree.json": json.dumps(FOLDER_TREE),
        f"{PROFILE}/session.json": json.dumps(SESSION),
        f"{mail}/Inbox": inbox_messages(),
        f"{mail}/Sent": mbox(SENT, first_index=100),
    }


def is_order_mail(entry: tuple) -> bool:
    return "orders@pagesandco.example" in entry[2]


def is_newsletter(entry: tuple) -> bool:
    return "newsletter@cityweekly.example" in entry[2]


# task id -> {path in the task folder: text}, besides the profile (under profile/, as it
# goes into ~/.thunderbird).
TASK_EXTRAS = {
    "thunderbird-move-orders-to-folder": {
        "expected-Orders": inbox_messages(is_order_mail),
        "expected-Inbox": inbox_messages(lambda e: not is_order_mail(e)),
    },
    "thunderbird-filter-city-weekly": {
        f"profile/{PROFILE}/Mail/{ACCOUNT_DIR}/Newsletters": "",
        "expected-Newsletters": inbox_messages(is_newsletter),
        "expected-Inbox": inbox_messages(lambda e: not is_newsletter(e)),
    },
    "thunderbird-compose-plain-text": {},
    "thunderbird-add-signature": {},
    "thunderbird-add-contact": {},
    "thunderbird-recall-sent-message": {},
}


def main() -> None:
    for task, extras in TASK_EXTRAS.items():
        folder = HERE / task
        shutil.rmtree(folder, ignore_errors=True)
        files = {f"profile/{path}": text for path, text in profile_files().items()}
        for path, text in {**files, **extras}.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(text)


if __name__ == "__main__":
    main()
