; Inno Setup 6 script for Reelroom on Windows. Build (on Windows, from the repository root):
;   python installer\build_inputs.py            (after pyinstaller installer\reelroom.spec)
;   iscc installer\windows\reelroom.iss
; The #include files are generated from pyproject.toml and the built bundle (tests/installer check them).
#include "..\build\windows\reelroom-version.iss"

[Setup]
AppId={#AppId}
AppName=Reelroom
AppVersion={#AppVersion}
VersionInfoVersion={#AppNumericVersion}
AppPublisher=Reelroom contributors
DefaultDirName={autopf}\Reelroom
DefaultGroupName=Reelroom
DisableProgramGroupPage=yes
OutputDir={#SourceRoot}\dist
OutputBaseFilename=reelroom-{#AppVersion}-windows-setup
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\reelroom.exe
Compression=lzma2/max
SolidCompression=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
PrivilegesRequired=admin
WizardStyle=modern
CloseApplications=yes

[Tasks]
Name: "desktopicon"; Description: "Create a &desktop shortcut"; GroupDescription: "Shortcuts:"
Name: "startatlogin"; Description: "Start Reelroom when I sign in"; GroupDescription: "Start-up:"
Name: "firewall"; Description: "Allow Reelroom through Windows Firewall (TCP {#HttpPort}, UDP {#DiscoveryPort})"; GroupDescription: "Network:"
Name: "service"; Description: "Service mode: run the server headless at boot (LocalService account)"; GroupDescription: "Service mode:"; Flags: unchecked

#include "..\build\windows\reelroom-files.iss"

[Icons]
Name: "{group}\Reelroom"; Filename: "{app}\reelroom.exe"
Name: "{group}\Uninstall Reelroom"; Filename: "{uninstallexe}"
Name: "{autodesktop}\Reelroom"; Filename: "{app}\reelroom.exe"; Tasks: desktopicon

[Registry]
; Start at login: the same Run key the tray's own "start at login" switch uses (per user).
Root: HKCU; Subkey: "Software\Microsoft\Windows\CurrentVersion\Run"; ValueType: string; ValueName: "Reelroom"; ValueData: """{app}\reelroom.exe"""; Flags: uninsdeletevalue; Tasks: startatlogin

[Run]
Filename: "{sys}\netsh.exe"; Parameters: "advfirewall firewall add rule name=""Reelroom HTTP"" dir=in action=allow protocol=TCP localport={#HttpPort} program=""{app}\reelroom-server.exe"""; Flags: runhidden; Tasks: firewall
Filename: "{sys}\netsh.exe"; Parameters: "advfirewall firewall add rule name=""Reelroom HTTP (tray)"" dir=in action=allow protocol=TCP localport={#HttpPort} program=""{app}\reelroom.exe"""; Flags: runhidden; Tasks: firewall
Filename: "{sys}\netsh.exe"; Parameters: "advfirewall firewall add rule name=""Reelroom discovery"" dir=in action=allow protocol=UDP localport={#DiscoveryPort}"; Flags: runhidden; Tasks: firewall
; Service mode: reelroom-server.exe is a console program, not an SCM service, so it runs as a boot-time
; scheduled task under LocalService (restarted by Task Scheduler), with its data in
; %PROGRAMDATA%\Reelroom, never in {app}.
Filename: "{sys}\schtasks.exe"; Parameters: "/Create /F /TN ""Reelroom Server"" /SC ONSTART /RU ""NT AUTHORITY\LOCALSERVICE"" /RL LIMITED /TR ""\""{app}\reelroom-server.exe\"" --data-dir \""{commonappdata}\Reelroom\"""""; Flags: runhidden; Tasks: service
Filename: "{sys}\schtasks.exe"; Parameters: "/Run /TN ""Reelroom Server"""; Flags: runhidden; Tasks: service
Filename: "{app}\reelroom.exe"; Description: "Start Reelroom now"; Flags: nowait postinstall skipifsilent; Tasks: not service

[UninstallRun]
Filename: "{sys}\schtasks.exe"; Parameters: "/End /TN ""Reelroom Server"""; Flags: runhidden; RunOnceId: "StopService"
Filename: "{sys}\schtasks.exe"; Parameters: "/Delete /F /TN ""Reelroom Server"""; Flags: runhidden; RunOnceId: "DeleteService"
Filename: "{sys}\netsh.exe"; Parameters: "advfirewall firewall delete rule name=""Reelroom HTTP"""; Flags: runhidden; RunOnceId: "FwHttp"
Filename: "{sys}\netsh.exe"; Parameters: "advfirewall firewall delete rule name=""Reelroom HTTP (tray)"""; Flags: runhidden; RunOnceId: "FwHttpTray"
Filename: "{sys}\netsh.exe"; Parameters: "advfirewall firewall delete rule name=""Reelroom discovery"""; Flags: runhidden; RunOnceId: "FwDiscovery"

; User data (%LOCALAPPDATA%\Reelroom, or %PROGRAMDATA%\Reelroom in service mode) is kept on uninstall.
