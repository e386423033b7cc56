/* exported init */
// The system menu of Ubuntu 22.04's GNOME Shell 42 on OSWorld's VM, in place of GNOME 43's
// quick settings, so that clicks recorded on the VM land on the same items here. The rows
// are the ones GNOME 42 shows on the VM (a virtual machine with a wired connection, a
// power-profiles daemon, no battery, no Bluetooth, no brightness control), in its order:
//
//   [speaker icon, Volume slider]
//   ----
//   Wired Connected      >  Turn Off, Wired Settings
//   Balanced             >  Balanced (current), Power Saver, ----, Power Settings
//   ----
//   Settings
//   Lock
//   Power Off / Log Out  >  Suspend, Restart…, Power Off…, ----, Log Out
//
// The volume slider drives the default sink of the desktop's sound server. What has no
// service behind it in the sandbox (the network, the power mode, suspending) only shows
// and answers as on the VM; Restart…, Power Off… and Log Out open GNOME Shell's own
// confirmation dialog, whose buttons have no session manager to act on.

const {Gio, GLib, GObject, Gvc, Shell, St} = imports.gi;

const BoxPointer = imports.ui.boxpointer;
const Main = imports.ui.main;
const PanelMenu = imports.ui.panelMenu;
const PopupMenu = imports.ui.popupMenu;
const Slider = imports.ui.slider;
const Volume = imports.ui.status.volume;

const ROLE = 'ubuntuSystemMenu';
const SETTINGS_APP = 'org.gnome.Settings.desktop';
// GNOME Shell's end-session dialog, which gnome-session opens on the VM (its D-Bus types).
const DIALOG_PATH = '/org/gnome/SessionManager/EndSessionDialog';
const DIALOG_INTERFACE = 'org.gnome.SessionManager.EndSessionDialog';
const DIALOG_LOGOUT = 0;
const DIALOG_SHUTDOWN = 1;
const DIALOG_RESTART = 2;
const DIALOG_SECONDS = 60;
const VOLUME_ICONS = ['audio-volume-muted-symbolic', 'audio-volume-low-symbolic',
    'audio-volume-medium-symbolic', 'audio-volume-high-symbolic', 'audio-volume-overamplified-symbolic'];

function openEndSessionDialog(type) {
    Gio.DBus.session.call('org.gnome.Shell', DIALOG_PATH, DIALOG_INTERFACE, 'Open',
        new GLib.Variant('(uuuao)', [type, global.get_current_time(), DIALOG_SECONDS, []]),
        null, Gio.DBusCallFlags.NONE, -1, null, (connection, result) => {
            try {
                connection.call_finish(result);
            } catch (e) {
                logError(e, 'ubuntu-system-menu: the end-session dialog did not open');
            }
        });
}

// The output volume: a speaker icon and a slider named "Volume" over the default sink.
const VolumeItem = GObject.registerClass({
    Signals: {'icon-changed': {}},
}, class VolumeItem extends PopupMenu.PopupBaseMenuItem {
    _init() {
        super._init({activate: false});
        this._control = Volume.getMixerControl();
        this._stream = null;

        this._icon = new St.Icon({style_class: 'popup-menu-icon', icon_name: 'audio-speakers-symbolic'});
        this.add_child(this._icon);
        this._slider = new Slider.Slider(0);
        this._slider.accessible_name = 'Volume';
        this.add_child(this._slider);
        this._sliderChangedId = this._slider.connect('notify::value', () => this._sliderChanged());

        this.connect('button-press-event', (actor, event) => this._slider.startDragging(event));
        this.connect('key-press-event', (actor, event) => this._slider.emit('key-press-event', event));
        this.connect('scroll-event', (actor, event) => this._slider.emit('scroll-event', event));

        this._control.connectObject(
            'state-changed', () => this._readSink(),
            'default-sink-changed', () => this._readSink(), this);
        this.connect('destroy', () => {
            this._control.disconnectObject(this);
            this._stream?.disconnectObject(this);
        });
        this._readSink();
    }

    _readSink() {
        this._stream?.disconnectObject(this);
        this._stream = this._control.get_state() === Gvc.MixerControlState.READY
            ? this._control.get_default_sink() : null;
        this._stream?.connectObject(
            'notify::volume', () => this._streamChanged(),
            'notify::is-muted', () => this._streamChanged(), this);
        this.visible = this._stream !== null;
        this._streamChanged();
    }

    _streamChanged() {
        if (this._stream) {
            const level = this._stream.is_muted ? 0 : this._stream.volume / this._control.get_vol_max_norm();
            this._slider.block_signal_handler(this._sliderChangedId);
            this._slider.value = Math.min(level, 1);
            this._slider.unblock_signal_handler(this._sliderChangedId);
        }
        this.emit('icon-changed');
    }

    _sliderChanged() {
        if (!this._stream)
            return;
        const volume = this._slider.value * this._control.get_vol_max_norm();
        if (volume < 1) {
            this._stream.volume = 0;
            if (!this._stream.is_muted)
                this._stream.change_is_muted(true);
        } else {
            this._stream.volume = volume;
            if (this._stream.is_muted)
                this._stream.change_is_muted(false);
        }
        this._stream.push_volume();
    }

    get panelIcon() {
        if (!this._stream)
            return null;
        const volume = this._stream.volume;
        if (this._stream.is_muted || volume <= 0)
            return VOLUME_ICONS[0];
        const step = Math.ceil(3 * volume / this._control.get_vol_max_norm());
        return VOLUME_ICONS[Math.clamp(step, 1, VOLUME_ICONS.length - 1)];
    }
});

// A row with a submenu of choices, one of them marked with a dot (the power mode).
function choiceSubmenu(label, iconName, choices, current) {
    const item = new PopupMenu.PopupSubMenuMenuItem(label, true);
    item.icon.icon_name = iconName;
    const section = new PopupMenu.PopupMenuSection();
    const choiceItems = choices.map(choice => {
        const choiceItem = new PopupMenu.PopupMenuItem(choice);
        choiceItem.connect('activate', () => {
            choiceItems.forEach(other => other.setOrnament(
                other === choiceItem ? PopupMenu.Ornament.DOT : PopupMenu.Ornament.NONE));
            item.label.text = choice;
        });
        choiceItem.setOrnament(choice === current ? PopupMenu.Ornament.DOT : PopupMenu.Ornament.NONE);
        section.addMenuItem(choiceItem);
        return choiceItem;
    });
    item.menu.addMenuItem(section);
    return item;
}

const SystemMenu = GObject.registerClass(
class SystemMenu extends PanelMenu.Button {
    _init() {
        super._init(0.0, 'System', false);
        this.menu.actor.add_style_class_name('aggregate-menu');

        this._indicators = new St.BoxLayout({style_class: 'panel-status-indicators-box'});
        this.add_child(this._indicators);
        this._addIndicator('network-wired-symbolic');
        this._volumeIndicator = this._addIndicator('audio-volume-high-symbolic');
        this._addIndicator('system-shutdown-symbolic');

        this._volume = new VolumeItem();
        this._volume.connect('icon-changed', () => this._syncVolumeIndicator());
        this.menu.addMenuItem(this._volume);
        this._syncVolumeIndicator();
        this.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());

        const wired = new PopupMenu.PopupSubMenuMenuItem('Wired Connected', true);
        wired.icon.icon_name = 'network-wired-symbolic';
        wired.menu.addAction('Turn Off', () => {});
        wired.menu.addSettingsAction('Wired Settings', 'gnome-network-panel.desktop');
        this.menu.addMenuItem(wired);

        const power = choiceSubmenu('Balanced', 'power-profile-balanced-symbolic', ['Balanced', 'Power Saver'],
            'Balanced');
        power.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());
        power.menu.addSettingsAction('Power Settings', 'gnome-power-panel.desktop');
        this.menu.addMenuItem(power);
        this.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());

        this._addSystemItems();
    }

    _addIndicator(iconName) {
        const icon = new St.Icon({style_class: 'system-status-icon', icon_name: iconName});
        this._indicators.add_child(icon);
        return icon;
    }

    _syncVolumeIndicator() {
        const iconName = this._volume.panelIcon;
        if (iconName)
            this._volumeIndicator.icon_name = iconName;
        this._volumeIndicator.visible = iconName !== null;
    }

    // An item that closes the whole menu at once, then acts (as GNOME 42's system items do).
    _action(menu, label, callback, iconName = null) {
        const item = iconName ? new PopupMenu.PopupImageMenuItem(label, iconName)
            : new PopupMenu.PopupMenuItem(label);
        item.connect('activate', () => {
            this.menu.itemActivated(BoxPointer.PopupAnimation.NONE);
            callback();
        });
        menu.addMenuItem(item);
        return item;
    }

    _addSystemItems() {
        const app = Shell.AppSystem.get_default().lookup_app(SETTINGS_APP);
        if (app) {
            const [iconName] = app.app_info.get_icon().names;
            this._action(this.menu, app.app_info.get_name(), () => {
                Main.overview.hide();
                app.activate();
            }, iconName);
        } else {
            log(`ubuntu-system-menu: ${SETTINGS_APP} is not installed; the menu has no Settings item`);
        }
        this._action(this.menu, 'Lock', () => Main.screenShield?.lock(true), 'changes-prevent-symbolic');

        const session = new PopupMenu.PopupSubMenuMenuItem('Power Off / Log Out', true);
        session.icon.icon_name = 'system-shutdown-symbolic';
        this._action(session.menu, 'Suspend', () => {});
        this._action(session.menu, 'Restart…', () => openEndSessionDialog(DIALOG_RESTART));
        this._action(session.menu, 'Power Off…', () => openEndSessionDialog(DIALOG_SHUTDOWN));
        session.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());
        this._action(session.menu, 'Log Out', () => openEndSessionDialog(DIALOG_LOGOUT));
        this.menu.addMenuItem(session);
    }
});

class Extension {
    enable() {
        this._menu = new SystemMenu();
        const quickSettings = Main.panel.statusArea.quickSettings;
        quickSettings?.container.hide();
        Main.panel.addToStatusArea(ROLE, this._menu, Main.panel._rightBox.get_n_children(), 'right');
    }

    disable() {
        this._menu.destroy();
        this._menu = null;
        Main.panel.statusArea.quickSettings?.container.show();
    }
}

function init() {
    return new Extension();
}
