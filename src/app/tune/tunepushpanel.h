// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/server/serverprofile.h"
#include "remote/flows/pushflow.h"

#include <QWidget>

#include <memory>

namespace Ui {
class TunePushPanel;
}

namespace moetune {

class ServingBenchBox;

// The Tune page's Push and proof tab (ui/tunepushpanel.ui): the server profile line, the push preview
// (target folder, why there, survival warnings, the row merge and the diff), what a push installed,
// the before/after proof of a restart, an undo, and the serving benchmark box. The page runs the flows
// and hands their results here; the panel only shows them and asks (the *Clicked signals).
class TunePushPanel : public QWidget {
    Q_OBJECT
public:
    explicit TunePushPanel(QWidget *parent = nullptr);
    ~TunePushPanel() override;

    ServingBenchBox *servingBox() const;
    bool persistentFolder() const; // "persistent folder" ticked
    void setProfile(const ServerProfile &profile);
    void setPushEnabled(bool enabled);
    // Restart and prove is on only while there is something to restart (a push or an undo that changed a
    // file, or a server stopped for the tuning) and no restart is running; Undo only while a push of the
    // run can be undone (issue 40 item 5).
    void setRestartEnabled(bool enabled); // false while a restart runs
    void setServerStopped(bool stopped);
    void setUndoAvailable(bool available);
    void setText(const QString &text);
    void appendText(const QString &text);
    QString text() const;
    void setProof(const QString &line);

    // The preview as text; Push is on when the preview may be pushed.
    void showPreview(const PushFlow::Preview &preview, const QString &hostLabel);
    // What a push did; profile: the server profile of the flows (nullptr without them).
    void showPushed(const PushRecord &record, const QString &error, const QString &hostLabel,
                    const ServerProfile *profile);
    void showProof(const PushFlow::Proof &proof);
    void showUndone(const PushFlow::Undo &undo);

signals:
    void previewClicked();
    void pushClicked();
    void restartClicked();
    void undoClicked();
    void profileClicked();

private:
    void updateButtons();

    std::unique_ptr<Ui::TunePushPanel> m_ui;
    bool m_restartBusy = false;
    bool m_somethingToRestart = false;
    bool m_serverStopped = false;
    bool m_undoAvailable = false;
};

} // namespace moetune
