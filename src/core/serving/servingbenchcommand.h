// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/framework.h"
#include "core/serving/servingworkload.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace moetune {

struct HostProbe;
struct ServerProfile;

// Where and how the server's own serving benchmark runs (docs/servers.md section 10): the framework's tool
// (`vllm bench serve`, `python3 -m sglang.bench_serving`), the server's interpreter, inside its
// container when the server profile says docker, against its OpenAI-compatible endpoint. Builds the
// exact command lines, every word quoted for a POSIX shell.
struct ServingBenchCommand {
    Framework framework = Framework::SGLang;
    // The address the tool sends to, as seen from the server's own host: the host's loopback unless the
    // server listens on one address only (its --host) or the user gave one (said on screen: addressNote).
    enum class AddressFrom { Host, Server, User };
    QString host = QStringLiteral("127.0.0.1");
    AddressFrom addressFrom = AddressFrom::Host;
    int port = 30000;
    QString model;           // --model; "" lets the tool ask /v1/models
    QString python;          // the server's interpreter (SGLang's tool is a module of it); "" = python3
    QString container;       // docker: the tool runs inside this container ("" = on the host)
    QString tool;            // the tool's command instead of the framework's own ("" = the framework's)
    QStringList environment; // "PYTHONPATH=..." the server's interpreter ran with (the tool gets the same)

    // The framework's default port and the tool, from the probe's server of that framework (its --port,
    // --host, model and interpreter) and the profile (docker container, health URL's port).
    static ServingBenchCommand suggest(Framework framework, const HostProbe *probe,
                                       const ServerProfile &profile);

    // Empty when usable, else a sentence naming what to fix.
    QString validate() const;
    // The tool's argv for one concurrency, writing its JSON result to resultFile.
    QStringList argv(const ServingWorkload &w, int concurrency, const QString &resultFile) const;
    // The command a person types to run it by hand (result file out.json / out.jsonl in the current
    // folder; `docker exec` included).
    QString manualCommand(const ServingWorkload &w, int concurrency) const;
    // The script moetune runs on the host: the tool with its result in a private temporary folder, then
    // a marker line and the result file's text on stdout, the tool's exit status kept. nonce makes the
    // marker and the in-container path unpredictable.
    QString script(const ServingWorkload &w, int concurrency, const QString &nonce) const;
    static QString resultMarker(const QString &nonce);
    // The tool is missing (exit 127, "No module named", "command not found", "invalid choice" for an old
    // vLLM without `bench`): a sentence that says so, else "".
    static QString missingToolSentence(int exitStatus, const QString &output, Framework framework);

    QString baseUrl() const;
    // " (the host's own address)", " (the server's --host)", " (the address you gave)".
    QString addressNote() const;
    QString toolName() const; // "vllm bench serve" / "sglang.bench_serving" / the custom tool
    QJsonObject toJson() const;
    static ServingBenchCommand fromJson(const QJsonObject &o);
    bool operator==(const ServingBenchCommand &) const = default;
};

} // namespace moetune
