#!/usr/bin/env python3
"""tests/redfish_emu.py - a Redfish BMC for the tests (Python standard library).

    redfish_emu.py --dir DIR --port PORT --cert CERT --key KEY [options]

Serves HTTPS on 127.0.0.1:PORT (only there) one node's BMC:

  /redfish                               {"v1": "/redfish/v1/"}
  /redfish/v1                            service root (no authentication)
  /redfish/v1/Systems[/ID]               one ComputerSystem: PowerState,
      Actions/#ComputerSystem.Reset with ResetType@Redfish.AllowableValues
  /redfish/v1/Systems/ID/Actions/ComputerSystem.Reset   POST {"ResetType"}
  /redfish/v1/Chassis[/ID]               one Chassis; its power reading as
      EnvironmentMetrics (PowerWatts.Reading) or, with --power-schema power,
      as the older Power resource (PowerControl[0].PowerConsumedWatts)
  /redfish/v1/SessionService[/Sessions[/N]]   sessions: POST logs in
      (X-Auth-Token and Location in the answer), DELETE logs out

With --hook CMD every power change runs `sh -c 'CMD "$1"' sh on|off` in
the background (tests/lib/power-exec.sh HOST: the node's mxqd starts and
stops with its power, as a real node boots and dies).

Every other request needs HTTP basic authentication or a session token of
an account in DIR/accounts ("user:password" lines, mode 0600: passwords
never go through argv); wrong ones get 401 with a Redfish error body.

State and faults, files in DIR the test writes and reads:
  power        "On" or "Off" (written by the emulator on every change)
  watts        the chassis power reading; missing: Reading null (no
               measurement); "fail": the reading's resource answers 500
  ignore_soft  present: GracefulShutdown is accepted but does nothing
  ignore_on    present: On / ForceOn are accepted but do nothing
  on_delay     present: after On, PowerState is PoweringOn for that many
               seconds, then On
  slow         present: every answer waits that many seconds
  stall_after_reset
               present: the first answer after each Reset waits that many
               seconds (instead of slow): a read-back that times out
  fail         present: every authenticated request gets that HTTP status
               with an error whose ExtendedInfo says "simulated fault"
  echo_values  present: a rejected login's message quotes the password sent
  token_len    the length of the session tokens (hex digits; default 32)
  requests.log one line per request: "EPOCH METHOD PATH STATUS AUTH"
  sessions     the number of open sessions (written on every change)
  port         written once listening (the test waits for it)
"""

import argparse
import base64
import json
import os
import secrets
import signal
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ALL_RESETS = ["On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart",
              "Nmi", "ForceOn", "PushPowerButton", "PowerCycle"]


class Bmc:
    def __init__(self, args):
        self.dir = args.dir
        self.system_id = args.system_id
        self.stall_next = False     # the next answer waits stall_after_reset
        self.chassis_id = args.chassis_id
        self.node = args.node_name
        self.schema = args.power_schema
        self.hook = args.hook
        self.resets = [r for r in args.reset_types.split(",") if r] if args.reset_types else ALL_RESETS
        self.lock = threading.Lock()
        self.sessions = {}          # token -> (id, user)
        self.next_session = 1
        if not os.path.exists(self.path("power")):
            self.write("power", "Off")

    def path(self, name):
        return os.path.join(self.dir, name)

    def read(self, name):
        try:
            with open(self.path(name)) as f:
                return f.read().strip()
        except OSError:
            return None

    def write(self, name, text):
        tmp = self.path(name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, self.path(name))

    def accounts(self):
        out = {}
        for line in (self.read("accounts") or "").splitlines():
            if ":" in line:
                u, p = line.split(":", 1)
                out[u] = p
        return out

    def run_hook(self, what):
        if not self.hook:
            return
        p = subprocess.Popen(["sh", "-c", self.hook + ' "$1"', "sh", what],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        threading.Thread(target=p.wait, daemon=True).start()

    def set_power(self, state):
        old = self.read("power")
        self.write("power", state)
        if old != state and state in ("On", "Off"):
            self.run_hook("on" if state == "On" else "off")


def error_body(code, message, extended):
    return {"error": {"code": "Base.1.15.0." + code, "message": message,
                      "@Message.ExtendedInfo": [{"@odata.type": "#Message.v1_1_1.Message",
                                                 "MessageId": "Base.1.15.0." + code,
                                                 "Message": extended, "Severity": "Critical",
                                                 "Resolution": "See the test."}]}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mxq-redfish-emu"

    def log_message(self, fmt, *args):
        pass

    @property
    def bmc(self):
        return self.server.bmc

    def answer(self, status, body=None, headers=None):
        data = b"" if body is None else json.dumps(body, indent=1).encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("OData-Version", "4.0")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        with open(self.bmc.path("requests.log"), "a") as f:
            f.write("%.3f %s %s %d %s\n" % (time.time(), self.command, self.path, status,
                                            getattr(self, "auth_kind", "-")))

    def who(self):
        """The account of this request, or None."""
        token = self.headers.get("X-Auth-Token")
        if token:
            self.auth_kind = "token"
            with self.bmc.lock:
                s = self.bmc.sessions.get(token)
            return s[1] if s else None
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            self.auth_kind = "basic"
            try:
                user, pw = base64.b64decode(auth[6:]).decode().split(":", 1)
            except (ValueError, UnicodeDecodeError):
                return None
            acc = self.bmc.accounts()
            if user in acc and secrets.compare_digest(acc[user], pw):
                return user
        self.auth_kind = "none"
        return None

    def body_json(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return None

    def route(self):
        slow = self.bmc.read("slow")
        if self.bmc.stall_next and self.bmc.read("stall_after_reset"):
            self.bmc.stall_next = False
            slow = self.bmc.read("stall_after_reset")
        if slow:
            time.sleep(float(slow))
        p = self.path.split("?", 1)[0].rstrip("/") or "/"
        sysp = "/redfish/v1/Systems/" + self.bmc.system_id
        chp = "/redfish/v1/Chassis/" + self.bmc.chassis_id
        sessions = "/redfish/v1/SessionService/Sessions"
        body = self.body_json() if self.command in ("POST", "PATCH") else {}
        if body is None:
            return self.answer(400, error_body("MalformedJSON", "Malformed JSON.",
                                               "The request body submitted was malformed JSON."))
        if p == "/redfish" and self.command == "GET":
            return self.answer(200, {"v1": "/redfish/v1/"})
        if p == "/redfish/v1" and self.command == "GET":
            return self.answer(200, {
                "@odata.id": "/redfish/v1", "@odata.type": "#ServiceRoot.v1_15_0.ServiceRoot",
                "Id": "RootService", "Name": "Root Service", "RedfishVersion": "1.17.0",
                "UUID": "00000000-0000-0000-0000-0000000000%02d" % (self.server.server_port % 100),
                "Systems": {"@odata.id": "/redfish/v1/Systems"},
                "Chassis": {"@odata.id": "/redfish/v1/Chassis"},
                "SessionService": {"@odata.id": "/redfish/v1/SessionService"},
                "Links": {"Sessions": {"@odata.id": sessions}}})
        if p == sessions and self.command == "POST":
            acc = self.bmc.accounts()
            user, pw = str(body.get("UserName", "")), str(body.get("Password", ""))
            if user not in acc or not secrets.compare_digest(acc[user], pw):
                self.auth_kind = "login"
                # echo_values: quote the value, as Redfish's standard
                # PropertyValue* messages do
                echo = (" The value '%s' for the property Password is not accepted." % pw
                        if os.path.exists(self.bmc.path("echo_values")) else "")
                return self.answer(401, error_body(
                    "ResourceAtUriUnauthorized", "Unauthorized",
                    "While accessing the resource at %s, the service received an authorization "
                    "error: invalid user name or password.%s" % (sessions, echo)))
            token = secrets.token_hex(int(self.bmc.read("token_len") or 32) // 2)
            with self.bmc.lock:
                sid = str(self.bmc.next_session)
                self.bmc.next_session += 1
                self.bmc.sessions[token] = (sid, user)
                self.bmc.write("sessions", str(len(self.bmc.sessions)))
            self.auth_kind = "login"
            return self.answer(201, {"@odata.id": sessions + "/" + sid, "Id": sid,
                                     "Name": "Session " + sid, "UserName": user},
                               {"X-Auth-Token": token, "Location": sessions + "/" + sid})
        user = self.who()
        if user is None:
            return self.answer(401, error_body(
                "NoValidSession", "Unauthorized",
                "There is no valid session established with the implementation."))
        fail = self.bmc.read("fail")
        if fail:
            return self.answer(int(fail), error_body("GeneralError", "A general error has occurred.",
                                                     "simulated fault of the test BMC"))
        m = self.command
        if p == "/redfish/v1/Systems" and m == "GET":
            return self.answer(200, {"@odata.id": p, "Name": "Computer System Collection",
                                     "Members@odata.count": 1, "Members": [{"@odata.id": sysp}]})
        if p == sysp and m == "GET":
            return self.answer(200, {
                "@odata.id": sysp, "@odata.type": "#ComputerSystem.v1_20_0.ComputerSystem",
                "Id": self.bmc.system_id, "Name": self.bmc.node, "HostName": self.bmc.node,
                "PowerState": self.bmc.read("power") or "Off",
                "Status": {"State": "Enabled", "Health": "OK"},
                "Actions": {"#ComputerSystem.Reset": {
                    "target": sysp + "/Actions/ComputerSystem.Reset",
                    "ResetType@Redfish.AllowableValues": self.bmc.resets}},
                "Links": {"Chassis": [{"@odata.id": chp}]}})
        if p == sysp + "/Actions/ComputerSystem.Reset" and m == "POST":
            rt = body.get("ResetType")
            if rt not in self.bmc.resets:
                return self.answer(400, error_body(
                    "ActionParameterValueNotInList", "A general error has occurred.",
                    "The value '%s' for the parameter ResetType in the action "
                    "ComputerSystem.Reset is not in the list of acceptable values." % rt))
            with open(self.bmc.path("resets.log"), "a") as f:
                f.write("%.3f %s\n" % (time.time(), rt))
            self.bmc.stall_next = True
            state = self.bmc.read("power")
            if rt in ("On", "ForceOn") and os.path.exists(self.bmc.path("ignore_on")):
                pass
            elif rt in ("On", "ForceOn") and self.bmc.read("on_delay") and state == "Off":
                self.bmc.write("power", "PoweringOn")
                t = threading.Timer(float(self.bmc.read("on_delay")), self.bmc.set_power, ["On"])
                t.daemon = True
                t.start()
            elif rt in ("On", "ForceOn"):
                self.bmc.set_power("On")
            elif rt == "ForceOff":
                self.bmc.set_power("Off")
            elif rt in ("GracefulShutdown", "PushPowerButton") and state == "On":
                if not os.path.exists(self.bmc.path("ignore_soft")):
                    self.bmc.set_power("Off")
            elif rt == "PushPowerButton":
                self.bmc.set_power("On")
            return self.answer(204)
        if p == "/redfish/v1/Chassis" and m == "GET":
            return self.answer(200, {"@odata.id": p, "Name": "Chassis Collection",
                                     "Members@odata.count": 1, "Members": [{"@odata.id": chp}]})
        if p == chp and m == "GET":
            d = {"@odata.id": chp, "@odata.type": "#Chassis.v1_23_0.Chassis",
                 "Id": self.bmc.chassis_id, "Name": "Chassis of " + self.bmc.node,
                 "ChassisType": "RackMount", "PowerState": self.bmc.read("power") or "Off",
                 "Links": {"ComputerSystems": [{"@odata.id": sysp}]}}
            if self.bmc.schema == "environment":
                d["EnvironmentMetrics"] = {"@odata.id": chp + "/EnvironmentMetrics"}
                d["PowerSubsystem"] = {"@odata.id": chp + "/PowerSubsystem"}
            else:
                d["Power"] = {"@odata.id": chp + "/Power"}
            return self.answer(200, d)
        if m == "GET" and ((p == chp + "/EnvironmentMetrics" and self.bmc.schema == "environment") or
                           (p == chp + "/Power" and self.bmc.schema == "power")):
            w = self.bmc.read("watts")
            if w == "fail":
                return self.answer(500, error_body("InternalError", "Internal error",
                                                   "The power sensor could not be read."))
            reading = float(w) if w else None
            if p.endswith("/EnvironmentMetrics"):
                return self.answer(200, {
                    "@odata.id": p, "@odata.type": "#EnvironmentMetrics.v1_3_0.EnvironmentMetrics",
                    "Id": "EnvironmentMetrics", "Name": "Chassis Environment Metrics",
                    "PowerWatts": {"DataSourceUri": chp + "/Sensors/TotalPower",
                                   "Reading": reading}})
            return self.answer(200, {
                "@odata.id": p, "@odata.type": "#Power.v1_7_1.Power", "Id": "Power", "Name": "Power",
                "PowerControl": [{"@odata.id": p + "#/PowerControl/0", "MemberId": "0",
                                  "Name": "Chassis Power Control", "PowerConsumedWatts": reading}]})
        if p == chp + "/PowerSubsystem" and m == "GET" and self.bmc.schema == "environment":
            return self.answer(200, {"@odata.id": p, "@odata.type": "#PowerSubsystem.v1_1_0.PowerSubsystem",
                                     "Id": "PowerSubsystem", "Name": "Power Subsystem"})
        if p == "/redfish/v1/SessionService" and m == "GET":
            return self.answer(200, {"@odata.id": p, "Id": "SessionService", "Name": "Session Service",
                                     "ServiceEnabled": True, "Sessions": {"@odata.id": sessions}})
        if p == sessions and m == "GET":
            with self.bmc.lock:
                ids = [s[0] for s in self.bmc.sessions.values()]
            return self.answer(200, {"@odata.id": p, "Name": "Session Collection",
                                     "Members@odata.count": len(ids),
                                     "Members": [{"@odata.id": sessions + "/" + i} for i in ids]})
        if p.startswith(sessions + "/") and m == "DELETE":
            sid = p[len(sessions) + 1:]
            with self.bmc.lock:
                for tok, s in list(self.bmc.sessions.items()):
                    if s[0] == sid:
                        del self.bmc.sessions[tok]
                        self.bmc.write("sessions", str(len(self.bmc.sessions)))
                        return self.answer(204)
        return self.answer(404, error_body("ResourceNotFound", "Not found",
                                           "The requested resource of type %s named '%s' was not "
                                           "found." % ("Resource", p)))

    do_GET = do_POST = do_DELETE = do_PATCH = route


def main():
    ap = argparse.ArgumentParser(description="Redfish BMC emulator for the tests")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--node-name", default="node")
    ap.add_argument("--system-id", default="1")
    ap.add_argument("--chassis-id", default="1U")
    ap.add_argument("--power-schema", choices=["environment", "power"], default="environment")
    ap.add_argument("--hook", default="", help="shell command run with on|off at power changes")
    ap.add_argument("--reset-types", default="", help="AllowableValues, comma-separated")
    args = ap.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.bmc = Bmc(args)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    server.bmc.write("port", str(args.port))
    server.serve_forever()


if __name__ == "__main__":
    main()
