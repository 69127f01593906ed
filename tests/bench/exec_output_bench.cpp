// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
// Issue 42 item 6: the memory a host command's output costs the app. Runs COMMAND on this machine through
// the real LocalTransport and HostCalls::shell (what the flows use: it keeps every line it reads) and
// prints the lines kept and how the job ended; tests/bench/untrusted_bench.sh measures its peak memory
// with GNU time against the output's size. --unbounded lifts ExecRequest::maxLineOutputBytes (reading
// the lines through the transport directly, as HostCalls keeps them) for the figure without the bound.
// usage: exec_output_bench [--unbounded] COMMAND
#include "remote/agent/agentclient.h"
#include "remote/flows/hostcalls.h"
#include "remote/transport/localtransport.h"

#include <QCoreApplication>
#include <QDir>

#include <cstdio>

using namespace moetune;

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    QStringList args = app.arguments().mid(1);
    const bool unbounded = !args.isEmpty() && args.first() == QLatin1StringView("--unbounded");
    if (unbounded)
        args.removeFirst();
    if (args.size() != 1) {
        std::fprintf(stderr, "usage: exec_output_bench [--unbounded] COMMAND\n");
        return 2;
    }
    LocalTransport transport(QDir::tempPath());
    qsizetype kept = 0;
    qint64 chars = 0;
    QString error;
    if (unbounded) {
        ExecRequest req(args.first());
        req.maxLineOutputBytes = -1;
        QStringList all; // kept as HostCalls keeps them
        const JobId id = transport.exec(req);
        QObject::connect(&transport, &Transport::stdoutLines, &app, [&](JobId j, const QStringList &l) {
            if (j == id)
                all += l;
        });
        QObject::connect(&transport, &Transport::finished, &app, [&](JobId j, const JobResult &r) {
            if (j != id)
                return;
            kept = all.size();
            for (const QString &l : std::as_const(all))
                chars += l.size();
            error = r.error;
            app.quit();
        });
        app.exec();
    } else {
        AgentClient agent(&transport, HostConfig{}, QString());
        HostCalls calls(&transport, &agent);
        calls.shell(
            args.first(), 0,
            [&](const HostCalls::Shell &s) {
                kept = s.out.size();
                for (const QString &l : s.out)
                    chars += l.size();
                error = s.error;
                app.quit();
            },
            true);
        app.exec();
    }
    std::printf("lines kept %lld, %.1f MB of text; %s\n", static_cast<long long>(kept), double(chars) / 1e6,
                error.isEmpty() ? "ended" : qPrintable(error));
    return 0;
}
