//! A Bevy app as its users write one, started by wasm-bindgen on a page:
//! [`SPRITES`] sprites on a 2D camera, moved each frame by one system and
//! recoloured by another, with the frame counted by a third. After
//! [`REPORT_AFTER`] frames it logs its own counts (to hold the profile's
//! against) and goes on drawing, as a game does.

use bevy::prelude::*;
use wasm_bindgen::prelude::*;

/// Sprites on the screen.
pub const SPRITES: usize = 64;
/// Frames after which the app logs its counts.
pub const REPORT_AFTER: u64 = 120;

#[wasm_bindgen(start)]
pub fn start() {
    App::new()
        .add_plugins(DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window {
                resolution: (640, 480).into(),
                ..default()
            }),
            ..default()
        }))
        .init_resource::<Counts>()
        .add_systems(Startup, spawn)
        .add_systems(Update, (move_sprites, recolour, count_frame).chain())
        .run();
}

/// The app's own count of what its systems did.
#[derive(Resource, Default)]
struct Counts {
    frames: u64,
    moves: u64,
    recolours: u64,
}

#[derive(Component)]
struct Velocity(Vec2);

#[wasmprof::instrument]
fn spawn(mut commands: Commands) {
    commands.spawn(Camera2d);
    for i in 0..SPRITES {
        let angle = i as f32 * 0.7;
        commands.spawn((
            Sprite::from_color(Color::hsl(i as f32 * 5.0, 0.8, 0.5), Vec2::splat(16.0)),
            Transform::from_xyz((i % 8) as f32 * 60.0 - 210.0, (i / 8) as f32 * 50.0 - 175.0, 0.0),
            Velocity(Vec2::new(angle.cos(), angle.sin()) * 90.0),
        ));
    }
}

#[wasmprof::instrument]
fn move_sprites(
    time: Res<Time>,
    mut counts: ResMut<Counts>,
    mut sprites: Query<(&mut Transform, &mut Velocity)>,
) {
    for (mut transform, mut velocity) in &mut sprites {
        step(&mut transform, &mut velocity, time.delta_secs());
        counts.moves += 1;
    }
}

/// One sprite's move, bouncing off the window's edges.
#[wasmprof::instrument]
fn step(transform: &mut Transform, velocity: &mut Velocity, seconds: f32) {
    transform.translation += (velocity.0 * seconds).extend(0.0);
    if transform.translation.x.abs() > 300.0 {
        velocity.0.x = -velocity.0.x;
    }
    if transform.translation.y.abs() > 220.0 {
        velocity.0.y = -velocity.0.y;
    }
}

#[wasmprof::instrument]
fn recolour(counts: Res<Counts>, mut sprites: Query<&mut Sprite>) {
    let shift = counts.frames as f32;
    for (i, mut sprite) in sprites.iter_mut().enumerate() {
        sprite.color = Color::hsl((i as f32 * 5.0 + shift) % 360.0, 0.8, 0.5);
    }
}

#[wasmprof::instrument]
fn count_frame(mut counts: ResMut<Counts>, mut recolours: Local<u64>) {
    counts.frames += 1;
    *recolours += SPRITES as u64;
    counts.recolours = *recolours;
    if counts.frames == REPORT_AFTER {
        web_sys::console::log_1(
            &format!(
                "bevy-sprites: {} frames, {} moves, {} recolours",
                counts.frames, counts.moves, counts.recolours
            )
            .into(),
        );
    }
}
