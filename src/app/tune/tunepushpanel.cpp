// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/tune/tunepushpanel.h"

#include "app/tune/agentsentence.h"
#include "app/tune/servingbenchbox.h"
#include "ui_tunepushpanel.h"

#include <QJsonObject>
#include <QTextCursor>

using namespace Qt::StringLiterals;

namespace moetune {

TunePushPanel::TunePushPanel(QWidget *parent)
    : QWidget(parent)
    , m_ui(std::make_unique<Ui::TunePushPanel>()) {
    m_ui->setupUi(this);
    m_ui->pushText->setMinimumHeight(4 * fontMetrics().lineSpacing()); // the preview's rows, never a sliver
    connect(m_ui->pushPreviewButton, &QPushButton::clicked, this, &TunePushPanel::previewClicked);
    connect(m_ui->pushButton, &QPushButton::clicked, this, &TunePushPanel::pushClicked);
    connect(m_ui->restartButton, &QPushButton::clicked, this, &TunePushPanel::restartClicked);
    connect(m_ui->undoButton, &QPushButton::clicked, this, &TunePushPanel::undoClicked);
    connect(m_ui->profileButton, &QPushButton::clicked, this, &TunePushPanel::profileClicked);
    m_ui->pushButton->setEnabled(false);
    updateButtons();
    m_ui->pushText->setPlaceholderText(
        tr("Choose a finished run (after a run, or with Runs on host), then Preview push: the exact "
           "folder the server reads, a diff against the file there, and whether it survives an upgrade."));
}

TunePushPanel::~TunePushPanel() = default;

ServingBenchBox *TunePushPanel::servingBox() const {
    return m_ui->servingBenchBox;
}

bool TunePushPanel::persistentFolder() const {
    return m_ui->persistentCheck->isChecked();
}

void TunePushPanel::setProfile(const ServerProfile &p) {
    const QString problem = p.validate();
    m_ui->profileLabel->setText(problem.isEmpty() ? tr("Server profile: %1").arg(p.summary())
                                                  : tr("Server profile: %1").arg(problem));
}

void TunePushPanel::setPushEnabled(bool enabled) {
    m_ui->pushButton->setEnabled(enabled);
}

void TunePushPanel::setRestartEnabled(bool enabled) {
    m_restartBusy = !enabled;
    updateButtons();
}

void TunePushPanel::setServerStopped(bool stopped) {
    m_serverStopped = stopped;
    updateButtons();
}

void TunePushPanel::setUndoAvailable(bool available) {
    m_undoAvailable = available;
    updateButtons();
}

void TunePushPanel::updateButtons() {
    const bool restart = !m_restartBusy && (m_somethingToRestart || m_serverStopped);
    m_ui->restartButton->setEnabled(restart);
    m_ui->restartButton->setToolTip(restart ? tr("Restart the server through its profile and compare its log")
                                            : tr("Nothing to restart yet: push (or undo a push) first"));
    m_ui->undoButton->setEnabled(m_undoAvailable);
    m_ui->undoButton->setToolTip(m_undoAvailable ? tr("Put back what was there before this run's first push")
                                                 : tr("Nothing to undo: this run has no push on the host"));
}

void TunePushPanel::setText(const QString &text) {
    m_ui->pushText->setPlainText(text);
}

void TunePushPanel::appendText(const QString &text) {
    m_ui->pushText->appendPlainText(text);
    // The newest result (what a push installed, what an undo read back) in view.
    m_ui->pushText->moveCursor(QTextCursor::End);
    m_ui->pushText->ensureCursorVisible();
}

QString TunePushPanel::text() const {
    return m_ui->pushText->toPlainText();
}

void TunePushPanel::setProof(const QString &line) {
    m_ui->proofLabel->setText(line);
}

void TunePushPanel::showPreview(const PushFlow::Preview &p, const QString &hostLabel) {
    if (!p.ok()) {
        setText(agentSentenceForGui(p.error, hostLabel));
        return;
    }
    QStringList t{tr("Run %1: %2").arg(p.runId, p.shape.fileName(p.framework)),
                  tr("Target folder: %1").arg(p.target.folder), tr("Why there: %1").arg(p.target.source)};
    if (p.simulated && p.canPush())
        t.append(tr("SIMULATED results: this host is a practice or test double, so they may go in; a "
                    "real server refuses them."));
    for (const QString &w : p.target.warnings)
        t.append(tr("Warning: %1").arg(w));
    if (!p.target.persistentFolder.isEmpty())
        t.append(tr("Persistent alternative (tick 'persistent folder' and preview again): %1 with %2. %3")
                     .arg(p.target.persistentFolder, p.target.persistentEnv, p.target.persistentNote));
    for (const QJsonObject &d : p.diffs) {
        const bool exists = d.value("exists"_L1).toBool();
        const bool changed = d.value("changed"_L1).toBool(true);
        t.append(u"%1 %2"_s.arg(!exists   ? tr("new file")
                                : changed ? tr("replace (backup kept)")
                                          : tr("unchanged"),
                                d.value("target"_L1).toString()));
        for (const PushRowMerge &m : std::as_const(p.merges)) {
            if (m.target == d.value("target"_L1).toString())
                t.append(m.lines()); // every row: kept / replaced with its gain / added / unmeasured
        }
        const QString diff = d.value("diff"_L1).toString();
        if ((exists || !p.canPush()) && !diff.isEmpty())
            t.append(diff); // a refused push shows what it would have written
    }
    if (!p.refused.isEmpty())
        t.insert(1, tr("Push is off for this run: %1").arg(p.refused));
    setText(t.join(u'\n'));
    setPushEnabled(p.canPush());
    setUndoAvailable(p.undoablePushes > 0);
}

void TunePushPanel::showPushed(const PushRecord &r, const QString &error, const QString &hostLabel,
                               const ServerProfile *profile) {
    QStringList t;
    for (const PushRecord::File &f : r.files) {
        t.append(f.unchanged ? tr("unchanged %1 (the same bytes were there)").arg(f.target)
                             : tr("installed %1%2")
                                   .arg(f.target, f.backup.isEmpty() ? tr(" (new file; undo removes it)")
                                                                     : tr(" (backup %1)").arg(f.backup)));
    }
    if (r.changedSomething()) {
        m_somethingToRestart = true;
        m_undoAvailable = true;
    }
    updateButtons();
    if (!error.isEmpty())
        t.append(agentSentenceForGui(error, hostLabel));
    else if (!r.changedSomething())
        t.append(tr("Nothing changed on the host: the same bytes were already there, so there is nothing to "
                    "undo or restart for this push."));
    else if (profile && !profile->canStopStart())
        t.append(tr("Restart the server to load it: %1").arg(profile->validate()));
    else
        t.append(tr("Restart and prove restarts the server through its profile and re-diagnoses its log."));
    appendText(u"\n"_s + t.join(u'\n'));
}

void TunePushPanel::showProof(const PushFlow::Proof &p) {
    QStringList t{tr("Before/after: %1").arg(p.message)};
    if (!p.proof.ranksBefore.isEmpty())
        t.append(tr("  warned before: %1").arg(p.proof.ranksBefore.join(u", "_s)));
    for (const PushProof::Remaining &r : p.proof.remaining)
        t.append(tr("  still: %1 (%2)").arg(r.title, r.sources.join(u", "_s)));
    if (p.ok && p.proof.warningGone())
        t.append(tr("  warning gone on every rank"));
    if (!p.proof.ranksUsing.isEmpty())
        t.append(tr("  ranks using the pushed file: %1").arg(p.proof.ranksUsing.join(u", "_s)));
    if (!p.afterLogFile.isEmpty())
        t.append(tr("  log since the restart: %1").arg(p.afterLogFile));
    setProof(p.ok ? p.proof.summary() : p.message);
    appendText(t.join(u'\n'));
}

void TunePushPanel::showUndone(const PushFlow::Undo &u) {
    QStringList t = u.lines; // what the read-back found, path by path
    if (u.ok) {
        t.append(u.message);
        setProof(u.message);     // the proof shown was of the push this undo reverted
        m_undoAvailable = false; // every push of the run is undone now
        if (u.changedSomething) {
            m_somethingToRestart = true;
            t.append(tr("Restart the server to load what is there now."));
        }
    } else {
        t.append(u.error);
        if (u.error.contains(u"Nothing to undo"_s) || u.error.contains(u"nothing to undo"_s))
            m_undoAvailable = false;
    }
    updateButtons();
    appendText(u"\n"_s + t.join(u'\n'));
}

} // namespace moetune
