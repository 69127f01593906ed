// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "app/tune/tunejobcheck.h"
#include "core/job/tunespec.h"
#include "core/job/tuningtarget.h"

#include <QWidget>

#include <memory>
#include <optional>

namespace Ui {
class TuneJobForm;
}

namespace moetune {

class HostRegistry;

// The Tune page's job form (ui/tunejobform.ui): the host and every field of a job, checked as one types
// by the core's JobCheck, each bad field marked with its sentence, and the file names the run writes
// next to the ones the server wanted.
class TuneJobForm : public QWidget {
    Q_OBJECT
public:
    explicit TuneJobForm(QWidget *parent = nullptr);
    ~TuneJobForm() override;

    // The hosts of the registry (the local machine first); the one chosen stays when it is still there.
    void reloadHosts(const HostRegistry &registry);
    QString hostAlias() const;
    QString hostLabel() const; // the name shown
    int hostCount() const;
    void chooseHost(const QString &alias);
    void clearHost(); // no host chosen yet: the combo asks for one (hostAlias() is "")
    void chooseBackend(const QString &backend);

    void setSpec(const TuneSpec &spec); // every field but the host
    TuneSpec spec() const;              // as the fields say now (no device name: the caller's)
    void setSource(const QString &sentence);
    // K and top-k from a model's config.json on this machine (hidden_size, num_experts_per_tok; a
    // multimodal model's text_config too): "" when both were filled, else what is wrong with the file.
    // The "K and top-k from config.json..." button asks for the file.
    QString loadModelConfig(const QString &path);
    // Checks spec (with what was typed but does not parse), marks the fields, shows the sentences and the
    // file names; synthetic adds that its files cannot be installed.
    TuneJobCheck showCheck(const TuneSpec &spec, const std::optional<TuningTarget> &target);
    QString validation() const; // the sentences shown, "" when the job is runnable

signals:
    void changed();     // a field of the job
    void hostChanged(); // the host chosen

private:
    std::unique_ptr<Ui::TuneJobForm> m_ui;
};

} // namespace moetune
