// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Which of a host's servers the flows act on (issue 41) and which processes may be one (issue 42.1):
// HostProbe::focused over probes as the agent writes them (two servers of the agent's user on two ports,
// another user's process), ServerChoice's parsing, the question asked instead of a guess, and the server
// profile suggested from a process (never from another user's, never running an untrusted interpreter).
#include "core/host/hostprobe.h"
#include "core/host/serverchoice.h"
#include "core/push/pushtarget.h"
#include "core/server/serverprofile.h"
#include "remote/hosts/serverprofilesuggestion.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

QJsonObject server(qint64 pid, int port, const QString &model, int experts, int n, const QString &log,
                   const QString &root) {
    return QJsonObject{
        {"pid"_L1, pid},
        {"framework"_L1, "sglang"_L1},
        {"cmdline"_L1, QJsonArray{u"/venv/bin/python3"_s, u"-m"_s, u"sglang.launch_server"_s,
                                  u"--model-path"_s, model, u"--port"_s, QString::number(port)}},
        {"model"_L1, model},
        {"tp"_L1, 1},
        {"port"_L1, port},
        {"port_from_cmdline"_L1, true},
        {"uid"_L1, 1000},
        {"user"_L1, "me"_L1},
        {"moe"_L1, QJsonObject{{"num_experts"_L1, experts},
                               {"top_k"_L1, 8},
                               {"hidden_size"_L1, 2048},
                               {"moe_intermediate_size"_L1, n}}},
        {"suggested_spec"_L1,
         QJsonObject{
             {"framework"_L1, "sglang"_L1}, {"E"_L1, experts}, {"N"_L1, n}, {"K"_L1, 2048}, {"topk"_L1, 8}}},
        {"launch"_L1,
         QJsonObject{{"log_file"_L1, log}, {"exe"_L1, "/usr/bin/python3.11"_L1}, {"cwd"_L1, "/srv"_L1}}},
        {"server_view"_L1, QJsonObject{{"python"_L1, "/venv/bin/python3"_L1},
                                       {"triton"_L1, "3.6.0"_L1},
                                       {"config_root"_L1, root},
                                       {"config_root_source"_L1, "module"_L1}}},
    };
}

// Two servers of the agent's user (ports 30001 and 30002, two models and shapes, two logs, two config
// roots) and a third process of another user on port 30003.
HostProbe twoServers() {
    QJsonObject o = QJsonDocument::fromJson(R"({"type":"probe","host":{"hostname":"gpu-7"},"gpus":[],
        "python":{"executable":"/usr/bin/python3","triton":"3.6.0"},
        "frameworks":[{"name":"sglang","importable":true,"version":"0.5.6","config_root":"/venv/cfg"}]})")
                        .object();
    o.insert("servers"_L1,
             QJsonArray{server(101, 30001, u"/models/a"_s, 128, 768, u"/logs/a.log"_s, u"/a/cfg"_s),
                        server(202, 30002, u"/models/b"_s, 60, 1408, u"/logs/b.log"_s, u"/b/cfg"_s)});
    o.insert("other_users_servers"_L1,
             QJsonArray{QJsonObject{
                 {"pid"_L1, 303},
                 {"framework"_L1, "sglang"_L1},
                 {"cmdline"_L1, QJsonArray{u"/tmp/x/python3"_s, u"-m"_s, u"sglang.launch_server"_s}},
                 {"model"_L1, "/models/c"_L1},
                 {"port"_L1, 30003},
                 {"uid"_L1, 1001},
                 {"user"_L1, "mallory"_L1},
                 {"systemd_unit"_L1, "sglang-c.service"_L1},
                 {"not_used"_L1, "pid 303 belongs to mallory, not to me"_L1}}});
    return *HostProbe::fromJson(o);
}

QList<qint64> pids(const QList<ServerProcess> &list) {
    QList<qint64> out;
    for (const ServerProcess &s : list)
        out.append(s.pid);
    return out;
}

} // namespace

class TestServerChoice : public QObject {
    Q_OBJECT
private slots:
    void parse_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("back");
        QTest::newRow("empty") << QString() << true << QString();
        QTest::newRow("either") << u"4242"_s << true << u"4242"_s;
        QTest::newRow("pid") << u"pid 4242"_s << true << u"pid 4242"_s;
        QTest::newRow("port") << u" port 30000 "_s << true << u"port 30000"_s;
        QTest::newRow("port too big") << u"port 70000"_s << false << QString();
        QTest::newRow("word") << u"first"_s << false << QString();
        QTest::newRow("zero") << u"0"_s << false << QString();
        QTest::newRow("three words") << u"pid 1 2"_s << false << QString();
    }
    void parse() {
        QFETCH(QString, text);
        QFETCH(bool, ok);
        QFETCH(QString, back);
        QString error;
        const auto c = ServerChoice::parse(text, &error);
        QCOMPARE(bool(c), ok);
        if (c)
            QCOMPARE(c->text(), back);
        else
            QVERIFY2(error.contains(u"give a pid or a port"_s), qPrintable(error));
    }

    void parsesEveryServer() {
        const HostProbe p = twoServers();
        QCOMPARE(pids(p.servers), (QList<qint64>{101, 202}));
        QCOMPARE(pids(p.otherUsersServers), QList<qint64>{303});
        QCOMPARE(p.servers[1].port, 30002);
        QCOMPARE(p.servers[1].user, u"me"_s);
        QCOMPARE(p.otherUsersServers[0].launch.systemdUnit, u"sglang-c.service"_s);
        QVERIFY(!p.otherUsersServers[0].notUsed.isEmpty());
        // two shapes and no choice: no job is suggested, the question names both, never a pick
        QVERIFY(!p.suggestedSpec);
        const QString ask = p.serverQuestion(u"with --server PID|PORT"_s);
        QVERIFY2(ask.contains(u"gpu-7 runs 2 servers"_s) &&
                     ask.contains(u"SGLang pid 101 on port 30001 (/models/a)"_s) &&
                     ask.contains(u"SGLang pid 202 on port 30002 (/models/b)"_s) &&
                     ask.contains(u"--server PID|PORT"_s),
                 qPrintable(ask));
        QVERIFY2(!ask.contains(u"303"_s), "another user's process is never a candidate");
    }

    void focused_data() {
        QTest::addColumn<QString>("choice");
        QTest::addColumn<QString>("unit");
        QTest::addColumn<QString>("log");
        QTest::addColumn<QList<qint64>>("servers");
        QTest::addColumn<QString>("problem");
        QTest::newRow("no choice") << QString() << QString() << QString() << QList<qint64>{101, 202}
                                   << QString();
        QTest::newRow("pid") << u"pid 202"_s << QString() << QString() << QList<qint64>{202} << QString();
        QTest::newRow("port") << u"port 30001"_s << QString() << QString() << QList<qint64>{101} << QString();
        QTest::newRow("either as pid")
            << u"202"_s << QString() << QString() << QList<qint64>{202} << QString();
        QTest::newRow("either as port")
            << u"30002"_s << QString() << QString() << QList<qint64>{202} << QString();
        QTest::newRow("the log's writer")
            << QString() << QString() << u"/logs/b.log"_s << QList<qint64>{202} << QString();
        QTest::newRow("a log nobody writes")
            << QString() << QString() << u"/logs/copy.log"_s << QList<qint64>{101, 202} << QString();
        QTest::newRow("explicit beats the log")
            << u"port 30001"_s << QString() << u"/logs/b.log"_s << QList<qint64>{101} << QString();
        QTest::newRow("not running") << u"port 31999"_s << QString() << QString() << QList<qint64>{}
                                     << u"The chosen server (port 31999) is not running"_s;
        // another user's process only when the profile names it: its pid or its systemd unit
        QTest::newRow("another user's port is no choice")
            << u"port 30003"_s << QString() << QString() << QList<qint64>{} << u"is not running"_s;
        QTest::newRow("another user's pid named")
            << u"pid 303"_s << QString() << QString() << QList<qint64>{303} << QString();
        QTest::newRow("another user's unit named")
            << QString() << u"sglang-c.service"_s << QString() << QList<qint64>{303} << QString();
    }
    void focused() {
        QFETCH(QString, choice);
        QFETCH(QString, unit);
        QFETCH(QString, log);
        QFETCH(QList<qint64>, servers);
        QFETCH(QString, problem);
        ServerProfile profile;
        profile.server = choice;
        if (!unit.isEmpty()) {
            profile.kind = ServerProfile::Kind::Systemd;
            profile.unit = unit;
        }
        const HostProbe all = twoServers();
        const HostProbe p = all.focused(ServerChoice::of(profile, log));
        QCOMPARE(pids(p.servers), servers);
        QVERIFY2(p.serverChoiceProblem.contains(problem), qPrintable(p.serverChoiceProblem));
        QCOMPARE(p.serverChoiceProblem.isEmpty(), problem.isEmpty());
        // nothing seen is lost: every process is still listed, each once
        QList<qint64> listed = pids(p.allServers());
        std::sort(listed.begin(), listed.end());
        QCOMPARE(listed, (QList<qint64>{101, 202, 303}));
        if (servers.size() == 1) {
            // the facts follow the chosen server: its job, no question
            QVERIFY(p.serverQuestion(u"x"_s).isEmpty());
            if (servers.first() != 303) {
                QVERIFY(p.suggestedSpec);
                QCOMPARE(p.suggestedSpec->experts, servers.first() == 101 ? 128 : 60);
            }
        } else {
            QVERIFY(!p.suggestedSpec);
            QVERIFY(!p.serverQuestion(u"x"_s).isEmpty());
        }
        // focusing again (the choice changed) starts from everything seen, not from the last focus
        QCOMPARE(pids(p.focused(ServerChoice::of(ServerProfile{}, u"/logs/a.log"_s)).servers),
                 QList<qint64>{101});
    }

    // The push acts on the chosen server: its own config root; with two and no choice, it asks.
    void pushTargetFollowsTheChoice() {
        const auto shape = *ConfigName::parse(u"E=128,N=768,device_name=NVIDIA_H200.json"_s);
        const auto shapeB = *ConfigName::parse(u"E=60,N=1408,device_name=NVIDIA_H200.json"_s);
        const HostProbe all = twoServers();
        ServerProfile pickB;
        pickB.server = u"port 30002"_s;
        const HostProbe b = all.focused(ServerChoice::of(pickB));
        PushTarget t = PushTarget::choose(Framework::SGLang, shapeB, nullptr, &b, pickB);
        QCOMPARE(t.folder, u"/b/cfg/triton_3_6_0"_s);
        QVERIFY2(t.source.contains(u"SGLang pid 202 on port 30002"_s), qPrintable(t.source));
        // the shape of server a pushed while b is chosen: still b's folder (the one the user chose)
        t = PushTarget::choose(Framework::SGLang, shape, nullptr, &b, pickB);
        QCOMPARE(t.folder, u"/b/cfg/triton_3_6_0"_s);
        // no choice and both serve no such shape: asked, not guessed
        const auto other = *ConfigName::parse(u"E=8,N=4096,device_name=NVIDIA_H200.json"_s);
        t = PushTarget::choose(Framework::SGLang, other, nullptr, &all, {});
        QVERIFY(t.folder.isEmpty());
        QVERIFY2(t.error.contains(u"runs 2 servers"_s) && t.error.contains(u"--server PID|PORT"_s),
                 qPrintable(t.error));
    }

    void profileSuggestion() {
        const HostProbe all = twoServers();
        ServerProfile s = suggestServerProfile(all.servers[1]);
        QCOMPARE(s.kind, ServerProfile::Kind::Command);
        QCOMPARE(s.server, u"port 30002"_s); // the profile is about that server
        QVERIFY(s.startCommand.contains(u"'/venv/bin/python3'"_s));
        // a server whose interpreter the agent refused to run is never restarted by running it
        ServerProcess planted = all.servers[1];
        planted.launch.interpreterProblem = u"the folder /tmp/x can be written by others (mode 0777)"_s;
        s = suggestServerProfile(planted);
        QCOMPARE(s.kind, ServerProfile::Kind::Manual);
        QVERIFY(s.startCommand.isEmpty() && s.stopCommand.isEmpty());
        QVERIFY2(s.note.contains(u"mode 0777"_s), qPrintable(s.note));
        // another user's process: nothing suggested from it
        s = suggestServerProfile(all.otherUsersServers[0]);
        QCOMPARE(s.kind, ServerProfile::Kind::Manual);
        QVERIFY(s.startCommand.isEmpty() && s.stopCommand.isEmpty() && s.server.isEmpty());
        // the choice is kept with the host's profile
        ServerProfile kept;
        kept.server = u"port 30002"_s;
        QCOMPARE(ServerProfile::fromJson(kept.toJson()).server, u"port 30002"_s);
    }
};

QTEST_GUILESS_MAIN(TestServerChoice)
#include "tst_serverchoice.moc"
