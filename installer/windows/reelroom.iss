; Inno Setup script for Reelroom on Windows. Build on Windows after the PyInstaller bundle:
;   python -m PyInstaller --noconfirm --distpath dist --workpath build\pyinstaller installer\reelroom.spec
;   python installer\windows\make_inputs.py dist\reelroom
;   iscc installer\windows\reelroom.iss
; iss_inputs.iss (generated) defines the version, paths and ports; this file holds the rest.
#include "iss_inputs.iss"

[Setup]
AppId={#AppId}
AppName=Reelroom
AppVersion={#AppVersion}
VersionInfoVersion={#AppVersionNumeric}
AppPublisher={#AppPublisher}
DefaultDirName={autopf}\Reelroom
DefaultGroupName=Reelroom
DisableProgramGroupPage=yes
OutputDir=..\..\dist
OutputBaseFilename=Reelroom-{#AppVersion}-setup
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\reelroom.exe
Compression=lzma2
SolidCompression=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
PrivilegesRequired=admin
WizardStyle=modern
CloseApplications=yes

[Tasks]
Name: "desktopicon"; Description: "Create a &desktop shortcut"; GroupDescription: "Shortcuts:"
Name: "startup"; Description: "Start Reelroom when I sign in"; GroupDescription: "Start:"
Name: "service"; Description: "Run the server as a Windows service (no tray; for machines nobody signs in to)"; GroupDescription: "Start:"; Flags: unchecked

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\Reelroom"; Filename: "{app}\reelroom.exe"
Name: "{group}\Uninstall Reelroom"; Filename: "{uninstallexe}"
Name: "{autodesktop}\Reelroom"; Filename: "{app}\reelroom.exe"; Tasks: desktopicon

[Registry]
; Start at login: the same Run key the tray's own "Start at login" setting writes.
Root: HKCU; Subkey: "Software\Microsoft\Windows\CurrentVersion\Run"; ValueType: string; ValueName: "Reelroom"; ValueData: """{app}\reelroom.exe"""; Flags: uninsdeletevalue; Tasks: startup

[Run]
Filename: "{sys}\netsh.exe"; Parameters: "advfirewall firewall add rule name=""Reelroom HTTP"" dir=in action=allow protocol=TCP localport={#HttpPort} program=""{app}\reelroom-server.exe"""; Flags: runhidden
Filename: "{sys}\netsh.exe"; Parameters: "advfirewall firewall add rule name=""Reelroom HTTP (tray)"" dir=in action=allow protocol=TCP localport={#HttpPort} program=""{app}\reelroom.exe"""; Flags: runhidden
Filename: "{sys}\netsh.exe"; Parameters: "advfirewall firewall add rule name=""Reelroom discovery"" dir=in action=allow protocol=UDP localport={#DiscoveryPort}"; Flags: runhidden
; reelroom-server.exe is a console program, not an SCM service (sc.exe would kill it after 30 s), so
; "service mode" is a boot-time scheduled task under LocalService that Task Scheduler keeps running.
Filename: "{sys}\schtasks.exe"; Parameters: "/Create /F /TN ""Reelroom Server"" /SC ONSTART /RU ""NT AUTHORITY\LOCALSERVICE"" /TR ""\""{app}\reelroom-server.exe\"" --data-dir \""{commonappdata}\Reelroom\"""""; Flags: runhidden; Tasks: service
Filename: "{sys}\schtasks.exe"; Parameters: "/Run /TN ""Reelroom Server"""; Flags: runhidden; Tasks: service
Filename: "{app}\reelroom.exe"; Description: "Start Reelroom now"; Flags: nowait postinstall skipifsilent; Tasks: not service

[UninstallRun]
Filename: "{sys}\schtasks.exe"; Parameters: "/End /TN ""Reelroom Server"""; Flags: runhidden; RunOnceId: "StopService"
Filename: "{sys}\schtasks.exe"; Parameters: "/Delete /F /TN ""Reelroom Server"""; Flags: runhidden; RunOnceId: "DeleteService"
Filename: "{sys}\netsh.exe"; Parameters: "advfirewall firewall delete rule name=""Reelroom HTTP"""; Flags: runhidden; RunOnceId: "FwHttp"
Filename: "{sys}\netsh.exe"; Parameters: "advfirewall firewall delete rule name=""Reelroom HTTP (tray)"""; Flags: runhidden; RunOnceId: "FwHttpTray"
Filename: "{sys}\netsh.exe"; Parameters: "advfirewall firewall delete rule name=""Reelroom discovery"""; Flags: runhidden; RunOnceId: "FwDiscovery"

; The user's data (%LOCALAPPDATA%\Reelroom, or ProgramData\Reelroom for the service) is never
; inside {app}, so an upgrade or an uninstall keeps the library, users and settings.
