import ArgumentParser

/// `pushctl live-activity …`: Live Activity tokens and start / update / end events.
struct LiveActivityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live-activity",
        abstract: "Register Live Activity tokens and start, update or end Live Activities.",
        discussion: """
            Push-to-start tokens (one per installation and attributes type) receive start events; each activity's \
            update token receives its update and end events, and is removed once an end is sent or APNs answers 410. \
            With --broadcast-channel, update and end go to an iOS 18 broadcast channel instead (see `pushctl channels`).
            """,
        subcommands: [LiveActivityTokensCommand.self, LiveActivityEventCommand.Start.self, LiveActivityEventCommand.Update.self,
                      LiveActivityEventCommand.End.self])
}
