#pragma once

#include "cli/diagnosesource.h"
#include "core/diagnosis/diagnosis.h"
#include "core/tuning/hostprobe.h"
#include "remote/hostconfig.h"

#include <QString>
#include <QTemporaryFile>

#include <memory>
#include <optional>

namespace moetune {
class AgentClient;
class Transport;
} // namespace moetune

namespace moetune::cli {

// HOST as the remote commands take it: `local` (this machine), a host added in the app, an alias of
// ~/.ssh/config, or user@host[:port]. The app's settings of that host (python, log source) come along.
struct HostTarget {
    HostConfig host;
    bool local = false;
};
std::optional<HostTarget> resolveHost(const QString &spec, QString *error);

// One non-interactive connection to a host for the CLI, driven through nested event loops (the CLI has
// no window to keep alive). Unknown host keys are refused unless acceptNewHostKey (or the fingerprint
// matches expectFingerprint); secrets are asked on the terminal only when stdin is one.
class HostSession {
public:
    struct Options {
        QString python; // overrides the host's interpreter
        bool acceptNewHostKey = false;
        QString expectFingerprint; // accept an unknown key only when it has this SHA256 fingerprint
        int timeoutMs = 120000;
    };

    HostSession(HostTarget target, Options options);
    ~HostSession();

    const HostConfig &host() const { return m_target.host; }
    Transport *transport() const { return m_transport.get(); } // after connect()
    AgentClient *agent() const { return m_agent.get(); }
    // Connected, or an error sentence. *hostKeyUnknown is set when the refusal was an unknown key
    // (the message then holds the fingerprint and the command that trusts it).
    bool connect(QString *error, bool *hostKeyUnknown = nullptr);
    QString acceptedFingerprint() const { return m_acceptedFingerprint; }
    QString seenKeyType() const { return m_keyType; }
    QString seenFingerprint() const { return m_fingerprint; }
    std::optional<HostProbe> probe(QString *error);
    // The last maxBytes of the host's log source into localFile.
    bool fetchLog(qint64 maxBytes, const QString &localFile, QString *error);
    void disconnect();

private:
    bool waitCommand(quint64 id, QString *error);

    HostTarget m_target;
    Options m_options;
    std::unique_ptr<Transport> m_transport;
    std::unique_ptr<AgentClient> m_agent;
    QString m_keyType;
    QString m_fingerprint;
    QString m_acceptedFingerprint;
    bool m_refusedKey = false;
    QString m_secretError;
};

// `diagnose --host HOST [--python PATH] [--bytes N] [--log SOURCE]`: fetches the end of the host's log,
// probes the host, and merges the facts into the diagnosis (the same steps as the app's Diagnose host).
class HostDiagnoseSource : public DiagnoseSource {
public:
    QList<QCommandLineOption> options() const override;
    bool isSelected(const QCommandLineParser &parser) const override;
    std::unique_ptr<QIODevice> open(const QCommandLineParser &parser, QString *label,
                                    QString *error) override;
    // The diagnosis of the fetched log with the host's probe merged in.
    Diagnosis merge(Diagnosis diagnosis) const;

private:
    std::optional<HostProbe> m_probe;
    std::unique_ptr<QTemporaryFile> m_log;
};

} // namespace moetune::cli
