// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// The value types under the tuning/push flows: ServerProfile (validation, JSON, persisted with the
// host), the profile suggested from the probe's launch facts, Preflight, RunProgress (seq dedupe),
// PushRecord, PushTarget (the server's own view first; survival warnings) and PushProof.
#include "core/diagnosis/diagnoser.h"
#include "core/host/hostprobe.h"
#include "core/host/preflight.h"
#include "core/push/pushproof.h"
#include "core/push/pushrecord.h"
#include "core/push/pushtarget.h"
#include "core/run/runprogress.h"
#include "core/server/serverprofile.h"
#include "remote/agent/agentclient.h"
#include "remote/flows/hostcalls.h"
#include "remote/hosts/hostconfig.h"
#include "remote/hosts/hoststore.h"
#include "remote/hosts/serverprofilesuggestion.h"
#include "remote/transport/localtransport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace moetune;

namespace {

QJsonObject obj(const char *json) {
    return QJsonDocument::fromJson(QByteArray(json)).object();
}

HostProbe probeWithServer(const char *launch, const char *view) {
    QJsonObject p =
        obj(R"({"type":"probe","host":{"hostname":"gpu-7"},"gpus":[{"index":0,"name":"NVIDIA_H200",
        "raw_name":"NVIDIA H200","memory_total_mib":143771,"memory_used_mib":120034,
        "processes":[{"pid":5123,"name":"python3","used_memory_mib":120000}]},
        {"index":1,"name":"NVIDIA_H200","raw_name":"NVIDIA H200","memory_total_mib":143771,"memory_used_mib":5,"processes":[]}],
        "python":{"executable":"/usr/bin/python3","triton":null},"frameworks":[],
        "servers":[{"pid":5123,"framework":"sglang","cmdline":["python3","-m","sglang.launch_server","--model-path","/m","--tp","2","--port","31000"],
        "model":"/m","tp":2}]})");
    QJsonArray servers = p.value("servers"_L1).toArray();
    QJsonObject s = servers[0].toObject();
    s.insert("launch"_L1, obj(launch));
    s.insert("server_view"_L1, obj(view));
    servers[0] = s;
    p.insert("servers"_L1, servers);
    return *HostProbe::fromJson(p);
}

} // namespace

class TestTuningFlowTypes : public QObject {
    Q_OBJECT
private slots:
    void profileValidation_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("error"); // a word of the sentence, "" = valid
        QTest::newRow("none") << u"{}"_s << u"no server profile"_s;
        QTest::newRow("manual") << uR"({"kind":"manual"})"_s << u"manage the server yourself"_s;
        QTest::newRow("no stop")
            << uR"({"kind":"systemd","startCommand":"x","logCommand":"y","readyLine":"r"})"_s
            << u"no stop command"_s;
        QTest::newRow("no log")
            << uR"({"kind":"command","stopCommand":"a","startCommand":"b","readyLine":"r"})"_s
            << u"neither a log file"_s;
        QTest::newRow("no line")
            << uR"({"kind":"command","stopCommand":"a","startCommand":"b","logFile":"/l"})"_s
            << u"readiness line"_s;
        QTest::newRow("bad url") << uR"({"kind":"docker","stopCommand":"a","startCommand":"b","logFile":"/l",
                                         "readiness":"health","healthUrl":"localhost:30000"})"_s
                                 << u"not an http(s) URL"_s;
        QTest::newRow("timeout") << uR"({"kind":"command","stopCommand":"a","startCommand":"b","logFile":"/l",
                                         "readyLine":"r","readyTimeoutS":3})"_s
                                 << u"between 10 s and 24 h"_s;
        QTest::newRow("ok")
            << uR"({"kind":"command","stopCommand":"a","startCommand":"b","logFile":"/l","readyLine":"r"})"_s
            << QString();
        QTest::newRow("ok health")
            << uR"({"kind":"docker","stopCommand":"a","startCommand":"b","logCommand":"docker logs x",
                                           "readiness":"health","healthUrl":"http://127.0.0.1:30000/health"})"_s
            << QString();
    }
    void profileValidation() {
        QFETCH(QString, json);
        QFETCH(QString, error);
        const ServerProfile p = ServerProfile::fromJson(QJsonDocument::fromJson(json.toUtf8()).object());
        if (error.isEmpty())
            QVERIFY2(p.validate().isEmpty(), qPrintable(p.validate()));
        else
            QVERIFY2(p.validate().contains(error), qPrintable(p.validate()));
        QCOMPARE(ServerProfile::fromJson(p.toJson()), p);
    }

    void profilePersistedWithHost() {
        QTemporaryDir dir;
        QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
        HostStore store(&settings, dir.filePath(u"no-ssh-config"_s));
        HostConfig h;
        h.alias = u"gpu-7"_s;
        h.serverProfile.kind = ServerProfile::Kind::Systemd;
        h.serverProfile.unit = u"sglang.service"_s;
        h.serverProfile.stopCommand = u"systemctl stop sglang.service"_s;
        h.serverProfile.readyTimeoutS = 1200;
        store.save(h);
        HostStore again(&settings, dir.filePath(u"no-ssh-config"_s));
        QCOMPARE(again.host(u"gpu-7"_s)->serverProfile, h.serverProfile);
    }

    void suggestion_data() {
        QTest::addColumn<QString>("launch");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("stop");
        QTest::addColumn<QString>("start");
        QTest::addColumn<QString>("log");
        QTest::newRow("systemd") << uR"({"systemd_unit":"sglang.service"})"_s
                                 << int(ServerProfile::Kind::Systemd) << u"systemctl stop 'sglang.service'"_s
                                 << u"systemctl start 'sglang.service'"_s
                                 << u"journalctl -u 'sglang.service' -n 20000 --no-pager -o cat"_s;
        QTest::newRow("user unit") << uR"({"systemd_unit":"s.service","systemd_user":true})"_s
                                   << int(ServerProfile::Kind::Systemd)
                                   << u"systemctl --user stop 's.service'"_s
                                   << u"systemctl --user start 's.service'"_s
                                   << u"journalctl --user -u 's.service' -n 20000 --no-pager -o cat"_s;
        QTest::newRow("docker")
            << uR"({"container_id":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"})"_s
            << int(ServerProfile::Kind::Docker) << u"docker stop -t 120 '0123456789ab'"_s
            << u"docker start '0123456789ab'"_s << u"docker logs --tail 20000 '0123456789ab'"_s;
        QTest::newRow("nohup")
            << uR"({"supervisor":"nohup","log_file":"/srv/s g.log","cwd":"/srv","exe":"/venv/bin/python3",
                                       "env":{"CUDA_VISIBLE_DEVICES":"0,1"}})"_s
            << int(ServerProfile::Kind::Command)
            << uR"x(kill -TERM "$(cat "$HOME"/'.cache/moetune/server-sglang.pid' 2>/dev/null || echo 5123)")x"_s
            << uR"x(cd '/srv' && mkdir -p "$HOME/.cache/moetune" && { CUDA_VISIBLE_DEVICES='0,1' setsid nohup '/venv/bin/python3' '-m' 'sglang.launch_server' '--model-path' '/m' '--tp' '2' '--port' '31000' >> '/srv/s g.log' 2>&1 < /dev/null & echo $! > "$HOME"/'.cache/moetune/server-sglang.pid'; })x"_s
            << QString();
    }
    void suggestion() {
        QFETCH(QString, launch);
        QFETCH(int, kind);
        QFETCH(QString, stop);
        QFETCH(QString, start);
        QFETCH(QString, log);
        const HostProbe p = probeWithServer(launch.toUtf8().constData(), "{}");
        const ServerProfile s = suggestServerProfile(p.servers.first());
        QCOMPARE(int(s.kind), kind);
        QCOMPARE(s.stopCommand, stop);
        QCOMPARE(s.startCommand, start);
        QCOMPARE(s.logCommand, log);
        QCOMPARE(s.readyLine, u"The server is fired up and ready to roll!"_s);
        QCOMPARE(s.healthUrl, u"http://127.0.0.1:31000/health"_s);
        QVERIFY(s.note.contains(u"5123"_s));
    }

    void preflight_data() {
        QTest::addColumn<QList<int>>("gpus");
        QTest::addColumn<qint64>("need");
        QTest::addColumn<QString>("problem"); // "" = can start
        QTest::newRow("synthetic") << QList<int>{} << qint64(0) << QString();
        QTest::newRow("free gpu") << QList<int>{1} << qint64(4096) << QString();
        QTest::newRow("held gpu") << QList<int>{0} << qint64(40960) << u"held by pid 5123 python3"_s;
        QTest::newRow("all, one held") << QList<int>{} << qint64(40960) << u"stop the server first"_s;
        QTest::newRow("no such gpu") << QList<int>{4} << qint64(0) << u"GPU 4 does not exist"_s;
    }
    void preflight() {
        QFETCH(QList<int>, gpus);
        QFETCH(qint64, need);
        QFETCH(QString, problem);
        const Preflight p = Preflight::evaluate(probeWithServer("{}", "{}"), gpus, need);
        QCOMPARE(p.canStart(), problem.isEmpty());
        if (!problem.isEmpty())
            QVERIFY2(p.problems.join(u' ').contains(problem), qPrintable(p.problems.join(u' ')));
        if (gpus.isEmpty() || gpus.contains(0))
            QVERIFY(p.serverHoldsGpus);
    }

    void runProgressDropsRepeats() {
        RunProgress r;
        const QList<QJsonObject> events{
            obj(R"({"type":"run_started","run_id":"r1","seq":0,"run_dir":"/runs/r1","pid":9,"backend":"synthetic","simulated":true})"),
            obj(R"({"type":"measurement","run_id":"r1","seq":1,"op":"up","m":1,"gpu":0,"round":-1,"median_us":20.0})"),
            obj(R"({"type":"measurement","run_id":"r1","seq":2,"op":"up","m":1,"gpu":0,"round":0,"median_us":15.0})"),
            obj(R"({"type":"candidate_error","run_id":"r1","seq":3,"op":"up","m":1,"gpu":1,"kind":"resources"})"),
            obj(R"({"type":"best","run_id":"r1","seq":4,"op":"up","m":1,"median_us":15.0,"default_us":20.0})"),
            obj(R"({"type":"progress","run_id":"r1","seq":5,"done":3,"total":6,"eta_s":4.0})"),
        };
        for (const QJsonObject &e : events)
            QVERIFY(r.apply(e));
        // a reattach that repeats seq 3..5, and an event of another run
        QVERIFY(!r.apply(events[3]));
        QVERIFY(!r.apply(events[5]));
        QVERIFY(!r.apply(obj(R"({"type":"measurement","run_id":"r2","seq":9,"gpu":0})")));
        QVERIFY(r.apply(
            obj(R"({"type":"done","run_id":"r1","seq":6,"status":"ok","wall_s":2.5,"simulated":true})")));
        QCOMPARE(r.measurements, 2);
        QCOMPARE(r.failures, 1);
        QCOMPARE(r.gpus.value(1).failed, 1);
        QCOMPARE(r.duplicatesDropped, 2);
        QCOMPARE(r.lastSeq, 6);
        QCOMPARE(r.bestPerBatch().value(1), 15.0);
        QCOMPARE(r.defaultUs.value(1), 20.0);
        QCOMPARE(r.state, u"finished"_s);
        QVERIFY(r.simulated);
        QVERIFY(r.progressLine().contains(u"[SIMULATED]"_s));
    }

    void pushRecordRoundTrip() {
        PushRecord rec;
        rec.runId = u"r1"_s;
        rec.framework = Framework::SGLang;
        rec.simulated = true;
        rec.addInstalled(obj(
            R"({"type":"installed","file_name":"E=1,N=2,device_name=X.json","target":"/c/t/E=1,N=2,device_name=X.json",
                               "backup":"/c/t/E=1,N=2,device_name=X.json.bak-1","created_folder":null,"sha256":"ab","unchanged":false})"));
        rec.addInstalled(obj(R"({"type":"installed","file_name":"d.json","target":"/c/t/d.json","backup":null,
                               "created_folder":"/c/t","sha256":"cd","unchanged":false})"));
        const auto back = PushRecord::fromJson(rec.toJson());
        QVERIFY(back);
        QCOMPARE(*back, rec);
        QCOMPARE(back->files[1].backup, QString());
        QVERIFY(back->changedSomething());
        QString error;
        QVERIFY(!PushRecord::fromJson(obj(R"({"format":"other"})"), &error));
        QVERIFY(error.contains(u"moetune push"_s));
    }

    void pushTarget_data() {
        QTest::addColumn<bool>("withLog");
        QTest::addColumn<QString>("launch");
        QTest::addColumn<QString>("view");
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("warning"); // "" = none
        const QString wanted =
            u"/srv/site-packages/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_6_0"_s;
        QTest::newRow("the server's warning")
            << true << u"{}"_s << u"{}"_s << wanted << u"installed SGLang package"_s;
        QTest::newRow("the server's interpreter")
            << false << u"{}"_s
            << uR"({"python":"/venv/bin/python","triton":"3.7.1","config_root":"/venv/cfg","config_root_source":"module"})"_s
            << u"/venv/cfg/triton_3_7_1"_s << QString();
        QTest::newRow("container")
            << false << uR"({"container_id":"ab"})"_s
            << uR"({"python":"/venv/bin/python","triton":"3.6.0","config_root":"/c","config_root_source":"module"})"_s
            << u"/c/triton_3_6_0"_s << u"writable layer"_s;
        QTest::newRow("env root")
            << false << uR"({"env":{"SGLANG_MOE_CONFIG_DIR":"/srv/moe"}})"_s
            << uR"({"python":"/p","triton":"3.6.0","config_root":"/srv/moe/configs","config_root_source":"SGLANG_MOE_CONFIG_DIR"})"_s
            << u"/srv/moe/configs/triton_3_6_0"_s << QString();
    }
    void pushTarget() {
        QFETCH(bool, withLog);
        QFETCH(QString, launch);
        QFETCH(QString, view);
        QFETCH(QString, folder);
        QFETCH(QString, warning);
        const QByteArray log =
            "[2026-11-29 10:00:09 TP0] Config file not found at "
            "/srv/site-packages/sglang/srt/layers/moe/fused_moe_triton/"
            "configs/triton_3_6_0/E=128,N=384,device_name=NVIDIA_H200.json. Fallback to triton version 3.4.0 "
            "and use MoE "
            "kernel config from "
            "/srv/site-packages/sglang/srt/layers/moe/fused_moe_triton/configs/triton_3_4_0/"
            "E=128,N=384,device_name=NVIDIA_H200.json. Performance might be sub-optimal!\n";
        const Diagnosis before = Diagnoser().diagnoseText(log);
        const HostProbe probe = probeWithServer(launch.toUtf8().constData(), view.toUtf8().constData());
        const ConfigName shape = *ConfigName::parse(u"E=128,N=384,device_name=NVIDIA_H200.json"_s);
        const PushTarget t =
            PushTarget::choose(Framework::SGLang, shape, withLog ? &before : nullptr, &probe, {});
        QCOMPARE(t.error, QString());
        QCOMPARE(t.folder, folder);
        if (warning.isEmpty()) {
            QVERIFY2(t.warnings.isEmpty(), qPrintable(t.warnings.join(u' ')));
        } else {
            QVERIFY2(t.warnings.join(u' ').contains(warning), qPrintable(t.warnings.join(u' ')));
            QVERIFY(t.persistentFolder.endsWith(u"/configs/triton_3_6_0"_s));
            QVERIFY(t.persistentEnv.startsWith(u"SGLANG_MOE_CONFIG_DIR="_s));
            QCOMPARE(t.persistent().folder, t.persistentFolder);
        }
    }

    // A host that runs two SGLang servers (two models on their own GPUs) and no log was diagnosed: the
    // folder is that of the server whose model has the tuned shape, wherever it is in the probe's list,
    // and the target says which server it took; when neither serves the shape it says that it guessed.
    void pushTargetSeveralServers_data() {
        QTest::addColumn<int>("servedBy"); // 0, 1, or -1: neither server has the shape
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("warning");
        QTest::newRow("the second serves it") << 1 << u"/b/cfg/triton_3_6_0"_s << u"pid 2002, which serves"_s;
        QTest::newRow("the first serves it") << 0 << u"/a/cfg/triton_3_6_0"_s << u"pid 1001, which serves"_s;
        // issue 41: neither serves it and nothing chose one: the push asks, never takes the first
        QTest::newRow("neither") << -1 << QString() << u"choose one"_s;
    }
    void pushTargetSeveralServers() {
        QFETCH(int, servedBy);
        QFETCH(QString, folder);
        QFETCH(QString, warning);
        QJsonArray servers;
        for (int i = 0; i < 2; ++i) {
            const QString root = i == 0 ? u"/a/cfg"_s : u"/b/cfg"_s;
            // E=128, N=384 per rank at TP 2 needs moe_intermediate_size 768; the other model has 1536
            const int intermediate = i == servedBy ? 768 : 1536;
            QJsonObject s = obj(R"({"framework":"sglang","cmdline":["python3","-m","sglang.launch_server"],
                "model":"/m","tp":2,"launch":{}})");
            s.insert("pid"_L1, i == 0 ? 1001 : 2002);
            s.insert("moe"_L1, QJsonObject{{"num_experts"_L1, 128},
                                           {"top_k"_L1, 8},
                                           {"hidden_size"_L1, 2048},
                                           {"moe_intermediate_size"_L1, intermediate}});
            s.insert("server_view"_L1, QJsonObject{{"python"_L1, u"/venv%1/bin/python"_s.arg(i)},
                                                   {"triton"_L1, u"3.6.0"_s},
                                                   {"config_root"_L1, root},
                                                   {"config_root_source"_L1, u"module"_s}});
            servers.append(s);
        }
        QJsonObject p = obj(R"({"type":"probe","host":{"hostname":"gpu-7"},"gpus":[],
            "python":{"executable":"/usr/bin/python3","triton":null},"frameworks":[]})");
        p.insert("servers"_L1, servers);
        const HostProbe probe = *HostProbe::fromJson(p);
        QCOMPARE(probe.servers.size(), 2);
        const ConfigName shape = *ConfigName::parse(u"E=128,N=384,device_name=NVIDIA_H200.json"_s);
        const PushTarget t = PushTarget::choose(Framework::SGLang, shape, nullptr, &probe, {});
        if (folder.isEmpty()) {
            QVERIFY2(t.error.contains(warning) && t.error.contains(u"pid 1001"_s) &&
                         t.error.contains(u"pid 2002"_s),
                     qPrintable(t.error));
            QVERIFY(t.folder.isEmpty());
            return;
        }
        QCOMPARE(t.error, QString());
        QCOMPARE(t.folder, folder);
        QVERIFY2(t.warnings.join(u' ').contains(warning), qPrintable(t.warnings.join(u' ')));
        // which server was taken is no reason to offer another folder
        QVERIFY(t.persistentFolder.isEmpty());
    }

    // Issue 23: a folder the log names is a push target only when it is a plain absolute folder where the
    // server reads configs; a planted one is never (the other sources decide, or the error says why).
    void pushTargetRefusesPlantedFolder_data() {
        QTest::addColumn<QByteArray>("wanted"); // the folder the server's own line names
        QTest::addColumn<QString>("view");      // the probe's view of the server ("{}" = none)
        QTest::addColumn<QString>("folder");    // "" = no target
        QTest::addColumn<QString>("why");
        const QString view =
            uR"({"python":"/venv/bin/python","triton":"3.6.0","config_root":"/venv/sglang/configs","config_root_source":"module"})"_s;
        QTest::newRow("dot-dot, no probe") << QByteArray("/etc/cron.d/../cron.d/configs/triton_3_6_0")
                                           << u"{}"_s << QString() << u"\"..\" parts"_s;
        QTest::newRow("dot-dot, probe")
            << QByteArray("/venv/sglang/configs/../../../etc/cron.d/triton_3_6_0") << view
            << u"/venv/sglang/configs/triton_3_6_0"_s << u"\"..\" parts"_s;
        QTest::newRow("outside the server's folder")
            << QByteArray("/etc/cron.d/configs/triton_3_6_0") << view
            << u"/venv/sglang/configs/triton_3_6_0"_s << u"outside the folders"_s;
        QTest::newRow("not a config folder, no probe")
            << QByteArray("/etc/cron.d/triton_3_6_0") << u"{}"_s << QString() << u"not shaped like"_s;
        QTest::newRow("inside the server's folder") << QByteArray("/venv/sglang/configs/triton_3_6_0") << view
                                                    << u"/venv/sglang/configs/triton_3_6_0"_s << QString();
    }
    void pushTargetRefusesPlantedFolder() {
        QFETCH(QByteArray, wanted);
        QFETCH(QString, view);
        QFETCH(QString, folder);
        QFETCH(QString, why);
        const QByteArray log =
            "[2026-11-29 10:00:09 TP0] Using default MoE kernel config. Performance might be "
            "sub-optimal! Config file not found at " +
            wanted + "/E=128,N=384,device_name=NVIDIA_H200.json\n";
        const Diagnosis before = Diagnoser().diagnoseText(log);
        QCOMPARE(before.targets.size(), 1); // the server's own line: a finding, its folder to be checked
        const HostProbe probe = probeWithServer("{}", view.toUtf8().constData());
        const ConfigName shape = *ConfigName::parse(u"E=128,N=384,device_name=NVIDIA_H200.json"_s);
        const PushTarget t = PushTarget::choose(Framework::SGLang, shape, &before, &probe, {});
        QCOMPARE(t.folder, folder);
        const QString said = t.warnings.join(u' ') + t.error;
        if (why.isEmpty()) {
            QVERIFY2(t.source.contains(u"logged as wanted"_s), qPrintable(t.source));
        } else {
            QVERIFY2(said.contains(why), qPrintable(said));
            QVERIFY2(said.contains(u"never a push target"_s), qPrintable(said));
            QVERIFY(!t.source.contains(u"logged as wanted"_s));
        }
        if (folder.isEmpty())
            QVERIFY(!t.error.isEmpty());
    }

    // Issue 23: attach must not believe a stream that lies. Each event is refused with a sentence; what
    // came before it stands.
    void runProgressRefusesLies_data() {
        QTest::addColumn<QString>("event");
        QTest::addColumn<QString>("why");
        QTest::newRow("another run")
            << uR"({"type":"measurement","run_id":"r2","seq":2,"op":"up","m":1,"gpu":0,"round":0,"median_us":15.0})"_s
            << u"an event of run r2 while following run r1"_s;
        QTest::newRow("no run id") << uR"({"type":"progress","seq":2,"done":1,"total":2})"_s
                                   << u"without a run_id"_s;
        QTest::newRow("negative best")
            << uR"({"type":"best","run_id":"r1","seq":2,"op":"up","m":1,"median_us":-10.0,"default_us":20.0})"_s
            << u"median_us is not a finite number > 0"_s;
        QTest::newRow("zero measurement")
            << uR"({"type":"measurement","run_id":"r1","seq":2,"op":"up","m":1,"gpu":0,"round":0,"median_us":0})"_s
            << u"median_us is not a finite number > 0"_s;
        QTest::newRow("negative default")
            << uR"({"type":"best","run_id":"r1","seq":2,"op":"up","m":1,"median_us":10.0,"default_us":-1})"_s
            << u"default_us"_s;
        QTest::newRow("result outside the run")
            << uR"({"type":"result_written","run_id":"r1","seq":2,"kind":"sglang","path":"/etc/passwd"})"_s
            << u"outside the run's folder: /etc/passwd"_s;
        QTest::newRow("result via dot-dot")
            << uR"({"type":"result_written","run_id":"r1","seq":2,"kind":"sglang","path":"/runs/r1/../../etc/passwd"})"_s
            << u"outside the run's folder"_s;
        QTest::newRow("seq jump")
            << uR"({"type":"progress","run_id":"r1","seq":10000000,"done":1,"total":2})"_s
            << u"seq 10000000 jumps ahead of the last event seen (1)"_s;
        QTest::newRow("fractional seq")
            << uR"({"type":"progress","run_id":"r1","seq":2.5,"done":1,"total":2})"_s
            << u"not a whole number"_s;
        QTest::newRow("huge gpu")
            << uR"({"type":"measurement","run_id":"r1","seq":2,"op":"up","m":1,"gpu":99999999,"round":0,"median_us":1.0})"_s
            << u"gpu is not an index"_s;
    }
    void runProgressRefusesLies() {
        QFETCH(QString, event);
        QFETCH(QString, why);
        RunProgress r;
        r.runId = u"r1"_s; // TuneFlow::follow sets the run it follows
        QString problem;
        QVERIFY(r.apply(obj(R"({"type":"run_started","run_id":"r1","seq":0,"run_dir":"/runs/r1","pid":9})"),
                        &problem));
        QVERIFY(r.apply(
            obj(R"({"type":"measurement","run_id":"r1","seq":1,"op":"up","m":1,"gpu":0,"round":0,"median_us":15.0})"),
            &problem));
        QCOMPARE(problem, QString());
        QVERIFY(!r.apply(obj(event.toUtf8().constData()), &problem));
        QVERIFY2(problem.contains(why), qPrintable(problem));
        QCOMPARE(r.lastSeq, 1);
        QCOMPARE(r.measurements, 1);
        QVERIFY(r.best.isEmpty());
        QVERIFY(r.files.isEmpty());
        // a file inside the run's folder is fine
        QVERIFY(r.apply(
            obj(R"({"type":"result_written","run_id":"r1","seq":2,"kind":"sglang","path":"/runs/r1/sglang/E=8.json"})"),
            &problem));
    }

    // Issue 23: a job keeps what its caller reads afterwards, not the run's stream: 30000 measurements
    // of an attach pass through `each` and are not kept (the CLI held every event: 3 M events, 1.64 GB).
    // TEST DOUBLE: a Python script in place of moetune-agent.pyz that prints a long run stream.
    void agentJobKeepsNoStream() {
        QTemporaryDir home;
        QVERIFY(home.isValid());
        const QString fake = home.filePath(u"fake-agent.py"_s);
        {
            QFile f(fake);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("# TEST DOUBLE of moetune-agent.pyz\n"
                    "import sys\n"
                    "w = sys.stdout.write\n"
                    "w('{\"type\":\"hello\",\"protocol\":1,\"agent_version\":\"fake\"}\\n')\n"
                    "for i in range(30000):\n"
                    "    "
                    "w('{\"type\":\"measurement\",\"run_id\":\"r1\",\"seq\":%d,\"median_us\":1.0,\"gpu\":0,"
                    "\"m\":1}\\n' % i)\n"
                    "w('{\"type\":\"done\",\"status\":\"ok\"}\\n')\n");
        }
        LocalTransport transport(home.path());
        HostConfig host;
        host.local = true;
        AgentClient agent(&transport, host, fake);
        HostCalls calls(&transport, &agent);
        qint64 seen = 0;
        bool finished = false;
        HostCalls::Agent result;
        calls.agentJob(
            agent.run(u"attach"_s, {u"r1"_s}),
            [&](const HostCalls::Agent &a) {
                result = a;
                finished = true;
            },
            [&](const AgentEvent &) { ++seen; });
        QTRY_VERIFY_WITH_TIMEOUT(finished, 60000);
        QVERIFY2(result.ok, qPrintable(result.error));
        QCOMPARE(seen, 30002);
        QVERIFY2(result.events.size() <= 2, qPrintable(QString::number(result.events.size())));
        QCOMPARE(result.of(u"done"_s).size(), 1);
    }

    void pushTargetUnknown() {
        const ConfigName shape = *ConfigName::parse(u"E=128,N=384,device_name=NVIDIA_H200.json"_s);
        const PushTarget t = PushTarget::choose(Framework::SGLang, shape, nullptr, nullptr, {});
        QVERIFY(t.folder.isEmpty());
        QVERIFY(t.error.contains(u"diagnose its log"_s));
    }

    void proof() {
        const QString dir = u"/c/triton_3_6_0/"_s;
        QByteArray before;
        for (int r = 0; r < 2; ++r)
            before += "[2026-11-29 10:00:09 TP" + QByteArray::number(r) +
                      "] Using default MoE kernel config. Performance "
                      "might be sub-optimal! Config file not found at "
                      "/c/triton_3_6_0/E=128,N=384,device_name=NVIDIA_H200.json, "
                      "you can create them with "
                      "https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton\n";
        QTemporaryDir tmp;
        const QString afterPath = tmp.filePath(u"after.log"_s);
        QFile f(afterPath);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("[2026-11-29 11:00:00 TP0] Using MoE kernel config from "
                "/c/triton_3_6_0/E=128,N=384,device_name=NVIDIA_H200.json.\n"
                "[2026-11-29 11:00:00 TP1] Using MoE kernel config from "
                "/c/triton_3_6_0/E=128,N=384,device_name=NVIDIA_H200.json.\n"
                "[2026-11-29 11:00:09] The server is fired up and ready to roll!\n");
        f.close();
        const QStringList pushed{dir + u"E=128,N=384,device_name=NVIDIA_H200.json"_s};
        const PushProof ok = PushProof::compare(Diagnoser().diagnoseText(before),
                                                Diagnoser().diagnoseFile(afterPath), pushed, afterPath);
        QVERIFY(ok.warningGone());
        QCOMPARE(ok.ranksBefore, (QStringList{u"TP0"_s, u"TP1"_s}));
        QCOMPARE(ok.ranksUsing, (QStringList{u"TP0"_s, u"TP1"_s}));
        QVERIFY(ok.summary().contains(u"gone on every rank"_s));
        // The same warning after the restart (on TP1 only): exactly what remains.
        const QByteArray stillTp1 = before.mid(before.indexOf("[2026-11-29 10:00:09 TP1]"));
        const PushProof bad = PushProof::compare(Diagnoser().diagnoseText(before),
                                                 Diagnoser().diagnoseText(stillTp1), pushed, QString());
        QVERIFY(!bad.warningGone());
        QVERIFY(!bad.remaining.isEmpty());
        for (const PushProof::Remaining &r : bad.remaining)
            QCOMPARE(r.sources, QStringList{u"TP1"_s});
        QVERIFY(bad.summary().contains(u"Still reported"_s));
        // No log since the restart proves nothing.
        QVERIFY(!PushProof::compare(Diagnoser().diagnoseText(before), Diagnosis{}, pushed, QString())
                     .warningGone());
    }
};

QTEST_GUILESS_MAIN(TestTuningFlowTypes)
#include "tst_tuningflowtypes.moc"
